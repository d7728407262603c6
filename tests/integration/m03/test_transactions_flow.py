"""Module 03's facts, asserted on the real cluster (the cluster wins over what the sources say).

Timeouts: markers and the Complete* records follow EndTxn within milliseconds on a healthy
cluster; the waits inside the demos allow 30 s for a busy 2-core machine. Orders asserted
here are causal (a record appended before the answer that follows it), never timings.
"""

from __future__ import annotations

import pytest
from confluent_kafka import TopicPartition

import eoslab
from eoslab import inspect as ins
from eoslab.m03_transactions import lesson as txn

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def lesson(cluster):
    eoslab.heal(cluster)
    lesson = txn.TransactionLesson(cluster, inputs=5)
    lesson.arrange_coordinators()
    return lesson


def test_coordinators_arranged_where_the_diagram_draws_them(cluster, lesson):
    assert ins.coordinator(cluster, lesson.transactional_id).reported == 3
    assert ins.coordinator(cluster, lesson.group, "group").reported == 1
    assert cluster.partition("__transaction_state", ins.coordinator_partition(lesson.transactional_id)).replicas[0] == 3


def test_commit_then_abort_on_the_wire_on_disk_and_in_the_log(cluster, lesson):
    p = lesson.producer("flow")
    inp = lesson.input_consumer()
    with lesson.step("init") as s_init:
        p.init_transactions(30)
    with lesson.step("begin") as s_begin:
        p.begin_transaction()
    with lesson.step("commit") as s_commit:
        p.produce(lesson.topic, b"a", partition=0)
        p.produce(lesson.topic, b"b", partition=1)
        p.send_offsets_to_transaction([TopicPartition(lesson.input_topic, 0, 2)], inp.consumer_group_metadata(), 30)
        p.commit_transaction(30)
    with lesson.step("abort") as s_abort:
        p.begin_transaction()
        p.produce(lesson.topic, b"x", partition=0)
        p.send_offsets_to_transaction([TopicPartition(lesson.input_topic, 0, 4)], inp.consumer_group_metadata(), 30)
        p.flush(30)
        p.abort_transaction(30)
    inp.close()
    # begin_transaction() sends nothing (a FindCoordinator from librdkafka's coordinator timer may still land in
    # the step's window on a loaded machine: run 32 in docs/reliability.md)
    assert [r["api"] for r in s_begin.txn_requests()] == []
    assert {r["api"] for r in s_begin.eos_trace()} <= {"FindCoordinator"}
    init = [r for r in s_init.eos_trace() if r["api"] == "InitProducerId"][-1]
    pid = init["response"]["producer_id"]
    where = {r["api"]: r["broker"] for r in s_commit.eos_trace()}
    assert where["AddPartitionsToTxn"] == where["AddOffsetsToTxn"] == where["EndTxn"] == 3  # txn coordinator
    assert where["TxnOffsetCommit"] == 1  # the GROUP coordinator (source 001 sends it to the txn coordinator)

    states = s_commit.states()
    assert list(states.state) == ["Ongoing", "Ongoing", "PrepareCommit", "CompleteCommit"] or list(states.state) == [
        "Ongoing",
        "PrepareCommit",
        "CompleteCommit",
    ]
    prepare_ms = int(states[states.state == "PrepareCommit"].append_time_ms.iloc[0])
    end = next(r for r in s_commit.eos_trace() if r["api"] == "EndTxn")
    assert prepare_ms <= end["response_time"] * 1000  # PrepareCommit is durable before the answer (causal)
    marks = ins.markers_of(cluster, lesson.partitions(), producer_ids=[pid])
    commits = [m for m in marks if m.marker == "COMMIT"]
    aborts = [m for m in marks if m.marker == "ABORT"]
    assert {(m.topic, m.partition) for m in commits} == set(lesson.partitions())  # A, B and the group's partition
    # The abort wrote to A and sent offsets: ABORT markers there, the one in __consumer_offsets included.
    assert {(m.topic, m.partition) for m in aborts} == {lesson.partitions()[0], lesson.partitions()[2]}
    assert all(m.timestamp >= prepare_ms for m in commits)  # markers are sent after PrepareCommit (causal)
    assert all(m.coordinator_epoch >= 0 and m.producer_id == pid for m in marks)
    # The aborted data stays on disk, indexed in .txnindex; read_committed skips it; its offsets were not committed.
    index = ins.txn_index(cluster, lesson.topic, 0)
    abort_a = next(m for m in aborts if m.topic == lesson.topic and m.partition == 0)
    assert [(e.producer_id, e.last_offset) for e in index if e.producer_id == pid] == [(pid, abort_a.offset)]
    committed = [v for _, _, v in txn.read_values(cluster, lesson.topic, [0], isolation="read_committed")]
    uncommitted = [v for _, _, v in txn.read_values(cluster, lesson.topic, [0], isolation="read_uncommitted")]
    assert "x" in uncommitted and "x" not in committed and "a" in committed
    assert txn.committed_offsets(cluster, lesson.group, lesson.input_topic, [0]) == {0: 2}
    abort_states = list(s_abort.states().state)
    assert abort_states[-2:] == ["PrepareAbort", "CompleteAbort"]


def test_a_fence_on_the_wire_on_disk_and_in_the_zombie(cluster, lesson):
    z = txn.fence_zombie(lesson)
    inits = z.init_answers()
    zombie_epoch = next(e for c, err, _, e in inits if c == z.zombie_client and err == "NONE")
    successor = [(err, e) for c, err, _, e in inits if c != z.zombie_client]
    assert [err for err, _ in successor[:-1]] and {err for err, _ in successor[:-1]} == {"CONCURRENT_TRANSACTIONS"}
    assert successor[-1] == ("NONE", zombie_epoch + 2)
    states = z.step.states()
    tail = [(s, e - zombie_epoch) for s, e in zip(states.state, states.producer_epoch, strict=True)][-4:]
    assert tail == [("Ongoing", 0), ("PrepareAbort", 1), ("CompleteAbort", 1), ("Empty", 2)]
    assert "PrepareEpochFence" not in set(states.state)
    assert list(states.client_transaction_version)[-3:] == [2, 2, 2]  # the server's version, for librdkafka
    answers = z.zombie
    assert answers["after: produce"]["ok"]  # produce() only queues
    assert answers["after: commit"]["code"] == "_FENCED" and answers["after: commit"]["fatal"]
    assert answers["after: produce again"]["code"] == "_FATAL" and answers["after: produce again"]["fatal"] is False
    assert answers["after: abort"]["code"] in ("_FENCED", "_CONFLICT")  # never a success
    refused = [r for r in z.step.trace if r["client_id"] == z.zombie_client and (r.get("response") or {}).get("error")]
    assert "INVALID_PRODUCER_EPOCH" in {r["response"]["error"] for r in refused}  # 47 on the wire
    leader_view = ins.describe_producers(cluster, lesson.topic, 0)
    pid = inits[-1][2]
    assert [s.producer_epoch for s in leader_view if s.producer_id == pid] == [zombie_epoch + 1]


def test_a_hung_transaction_is_aborted_by_the_coordinator_and_fences_its_producer(cluster, lesson):
    h = txn.hung_transaction(lesson, timeout_ms=2000)
    states = h.step.states()
    assert [(s, e) for s, e in zip(states.state, states.producer_epoch, strict=True)][-3:] == [
        ("Ongoing", 0),
        ("PrepareAbort", 1),
        ("CompleteAbort", 1),
    ]
    assert list(states.client_transaction_version)[-2:] == [2, 2]
    assert h.next_commit["error"] == "_FENCED" and h.next_commit["fatal"]
    errors = {(r.get("response") or {}).get("error") for r in h.step.trace}
    assert "INVALID_PRODUCER_EPOCH" in errors


def test_error_classes_through_proxy_faults(cluster, lesson):
    conf = {"transaction.timeout.ms": 10000, "message.timeout.ms": 2000, "socket.timeout.ms": 1500}
    r = lesson.producer("retriable-t", conf=conf)
    r.init_transactions(30)
    r.begin_transaction()
    r.produce(lesson.topic, b"r", partition=0)
    with lesson.proxy.delay_response(3.0, api="EndTxn", client_id=r.client_id):
        first = txn.attempt(r.commit_transaction, 1.0)
        abort = txn.attempt(r.abort_transaction, 1.0)
        again = [txn.attempt(r.commit_transaction, 1.0) for _ in range(6)]
    assert first["error"] == "_TIMED_OUT" and first["retriable"] and not first["fatal"]
    assert abort["error"] == "_CONFLICT"  # an abort while the commit can still resume
    assert {"ok": True} in again

    a = lesson.producer("abortable-t", conf=conf)
    a.init_transactions(30)
    epoch = a.eos().producer_epoch
    a.begin_transaction()
    with lesson.proxy.drop_request(api="Produce", client_id=a.client_id, producer_epoch=epoch, times=None):
        a.produce(lesson.topic, b"lost", partition=0)
        outcome = txn.attempt(a.commit_transaction, 10.0)
        assert outcome["txn_requires_abort"] and not outcome["fatal"]
        assert txn.attempt(a.abort_transaction, 30.0) == {"ok": True}
        a.begin_transaction()
        a.produce(lesson.topic, b"again", partition=0)
        assert txn.attempt(a.commit_transaction, 30.0) == {"ok": True}  # librdkafka bumped the epoch (KIP-360)
    assert a.eos().producer_epoch == epoch + 1

    f = lesson.producer(
        "fatal-t", transactional_id=f"{lesson.transactional_id}-f", conf={**conf, "transaction.timeout.ms": 2000}
    )
    f.init_transactions(30)
    f.begin_transaction()
    f.produce(lesson.topic, b"f", partition=0)
    f.flush(30)
    with lesson.proxy.drop_request(api="EndTxn", client_id=f.client_id, times=None):
        lost = txn.attempt(f.commit_transaction, 5.0)
    fenced = txn.attempt(f.commit_transaction, 30.0)
    assert lost["error"] == "_TIMED_OUT" and fenced["error"] == "_FENCED" and fenced["fatal"]
    ends = [x for x in lesson.trace(clients=[f.client_id]) if x["api"] == "EndTxn" and x.get("response")]
    assert ends[-1]["response"]["error"] == "INVALID_PRODUCER_EPOCH"


@pytest.mark.destructive
def test_the_coordinator_dies_mid_transaction_and_the_next_leader_completes_it(cluster, lesson):
    p = lesson.producer("failover")
    p.init_transactions(30)
    with lesson.step("before") as before:
        p.begin_transaction()
        p.produce(lesson.topic, b"before", partition=0)
        p.commit_transaction(30)
    epoch_before = max(before.disk().coordinator_epoch.dropna())
    f = txn.coordinator_failover(lesson, p)
    assert f.commit == {"ok": True} and f.new_coordinator != f.old_coordinator == 3
    assert list(f.states.state)[-2:] == ["PrepareCommit", "CompleteCommit"]
    marks = f.disk[f.disk.is_control]
    assert len(marks) == 2 and set(marks.marker) == {"COMMIT"}
    assert min(marks.coordinator_epoch) > epoch_before  # written by the new coordinator
    ends = [r for r in f.step.eos_trace() if r["api"] == "EndTxn" and r.get("response")]
    assert ends[-1]["broker"] == f.new_coordinator and ends[-1]["response"]["error"] == "NONE"
    assert ins.coordinator(cluster, p.transactional_id).reported == 3  # healed: broker 3 leads it again
