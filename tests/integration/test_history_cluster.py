"""The history checker on a real transactional history: one committed and one aborted transaction
written by confluent-kafka, recorded from its delivery reports, the output read at both isolation
levels through the kit. Clean as Kafka wrote it; a reader handed read_uncommitted's records as if
they were read_committed's is flagged as aborted reads (G1a), one per aborted record.

Timeouts: every blocking client call gets CLIENT_CALL (30 s: a coordinator still loading after a
restart); the final reads get FINAL_READ_TIMEOUT (see eoslab.history)."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import TopicPartition

from eoslab import inspect as ins
from eoslab._timeouts import CLIENT_CALL
from eoslab.history import (
    Committed,
    FinalRead,
    HistoryWriter,
    Position,
    Sent,
    check,
    read_both,
    read_history,
)

pytestmark = pytest.mark.cluster

COMMITTED = 3  # records of the committed transaction, partition 0
ABORTED = 2  # records of the aborted one, partitions 0 and 1


@pytest.fixture
def output(cluster, topic_name):
    cluster.admin.create_topic(topic_name, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    yield topic_name
    cluster.admin.delete_topic(topic_name)


def _write_history(cluster, topic: str, path) -> None:
    """A transactional producer's two transactions, recorded as a processor records them."""
    tid = f"hist-{uuid.uuid4().hex[:8]}"
    p = ins.ObservedProducer(
        {
            "bootstrap.servers": cluster.bootstrap_servers(),
            "transactional.id": tid,  # implies enable.idempotence=true and acks=all
            "linger.ms": 5,
        }
    )
    p.init_transactions(CLIENT_CALL)
    ident = p.eos()
    who = {"transactional_id": tid, "producer_id": ident.producer_id, "producer_epoch": ident.producer_epoch}
    with HistoryWriter(path, process=f"writer-{tid}") as h:

        def report(txn: int, source: Position):
            # librdkafka calls it from flush() / commit_transaction(), with the offset the leader gave
            return lambda err, msg: h.delivered(err, msg, source=source, txn=txn, **who)

        p.begin_transaction()
        for i in range(COMMITTED):
            p.produce(topic, f"c{i}".encode(), partition=0, on_delivery=report(1, Position("in", 0, i)))
        p.commit_transaction(CLIENT_CALL)  # flushes: every delivery report is in before it returns
        h.committed(1, [TopicPartition("in", 0, COMMITTED)], transactional_id=tid)

        p.begin_transaction()
        for i in range(ABORTED):
            src = Position("in", 0, COMMITTED + i)
            p.produce(topic, f"a{i}".encode(), partition=i, on_delivery=report(2, src))
        assert p.flush(CLIENT_CALL) == 0  # the aborted records must reach the log: read_uncommitted shows them
        p.abort_transaction(CLIENT_CALL)
        h.aborted(2, "the test aborts it", transactional_id=tid)


def test_a_real_transactional_history_checks_clean_and_a_reader_ignoring_isolation_is_g1a(cluster, output, tmp_path):
    path = tmp_path / "writer.jsonl"
    _write_history(cluster, output, path)
    history = read_history(path)
    sends = [e for e in history if isinstance(e, Sent)]
    assert len(sends) == COMMITTED + ABORTED and all(s.acked for s in sends)
    assert {(s.producer_id, s.producer_epoch) for s in sends} == {(sends[0].producer_id, 0)}
    assert sends[0].producer_id is not None and sends[0].producer_id >= 0
    assert [e.offsets for e in history if isinstance(e, Committed)] == [(Position("in", 0, COMMITTED),)]

    rc, ru = read_both(cluster, output)
    # On the cluster: 3 committed records at 0..2 and their marker at 3; the aborted record at 4 and
    # its marker at 5 (partition 0), at 0 and its marker at 1 (partition 1). Both reads end at the
    # high watermark: the markers are below it, and read_committed's LSO caught up with it.
    hw = {o.partition: o.high_watermark for o in ins.offsets(cluster, output)}
    assert hw == {0: COMMITTED + 1 + 1 + 1, 1: 2}
    assert rc.ends == ru.ends == hw
    assert [(r.partition, r.offset, r.value) for r in rc.records] == [(0, i, f"c{i}") for i in range(COMMITTED)]
    assert [(r.partition, r.offset, r.value) for r in ru.records] == [
        *[(0, i, f"c{i}") for i in range(COMMITTED)],
        (0, COMMITTED + 1, "a0"),
        (1, 0, "a1"),
    ]
    # What the delivery reports said is where the reads found each record.
    assert {(s.partition, s.offset, s.value) for s in sends} == {(r.partition, r.offset, r.value) for r in ru.records}

    clean = check([path], (rc, ru))
    assert clean.found == {}, str(clean)

    # The defect: the checker handed read_uncommitted's records as if a read_committed reader returned them.
    leaky = FinalRead(output, "read_committed", ru.records, ru.ends)
    flagged = check([path], (leaky, ru))
    assert flagged.found == {"aborted_read": ABORTED}, str(flagged)
    assert flagged.cases["aborted_read"].kind.jepsen == ":G1a"
    assert any(
        f"{output}[1]@0" in e and "which aborted (the test aborts it)" in e
        for e in flagged.cases["aborted_read"].examples
    )
