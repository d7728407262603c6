"""Module 07's judgements on the real cluster: the checker blames the lost inputs of a crash on the consumer's
auto commit and names a consumer that left its group; ``inspect.group_offsets`` shows offsets pending in an open
transaction and counts a transactional topic's lag in records left to read. Behaviour, not timings."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from eoslab import inspect as ins
from eoslab._wait import wait_until
from eoslab.m07_production.lesson import MISTAKES, Scenario, program, run_program, write_source

pytestmark = [pytest.mark.cluster]


def _run(cluster, mistake, scenario, folder):
    spec = write_source(program(mistake, name="processor"), "processor", folder)
    return run_program(cluster, spec, scenario, run_dir=folder, name=mistake or "right")


def test_a_crash_after_the_auto_commit_loses_inputs_and_the_checker_blames_it(cluster, tmp_path):
    scenario = MISTAKES["auto_commit"].scenario
    wrong = _run(cluster, "auto_commit", scenario, tmp_path)
    cause = wrong.verdict.cause("offsets_outside_txn")
    assert wrong.verdict.count("missing_output") > 0, wrong.verdict
    assert cause is not None and cause.blamed["missing_output"] == wrong.verdict.count("missing_output")
    assert "auto commit" in cause.examples[0]
    right = _run(cluster, None, scenario, tmp_path)  # the same crash, enable.auto.commit=False
    assert right.clean, right.verdict
    assert [c for _, c in right.exits] == [-9]  # it was killed, and its successor finished the work


def test_a_batch_longer_than_the_poll_interval_is_named_and_stalls(cluster, tmp_path):
    run = _run(cluster, "slow_batch", Scenario(inputs=30, limit=15), tmp_path)
    cause = run.verdict.cause("left_group")
    assert run.stalled and cause is not None, run.verdict
    assert any("maximum poll interval" in e for e in cause.examples), cause.examples
    assert run.committed == 0 and run.aborted >= 1


def test_group_offsets_show_pending_offsets_then_records_left_not_markers(cluster):
    tag = uuid.uuid4().hex[:6]
    topic, group = f"prod-{tag}", f"prod-g-{tag}"
    cluster.admin.create_topic(topic, partitions=1)
    bootstrap = cluster.bootstrap_servers()
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"prod-{tag}"})
    p.init_transactions()
    for outcome in ("commit", "abort"):  # 3 records + COMMIT at 3, 3 aborted + ABORT at 7: HW 8
        p.begin_transaction()
        for i in range(3):
            p.produce(topic, f"{outcome}-{i}".encode())
        p.flush()
        p.commit_transaction() if outcome == "commit" else p.abort_transaction()
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                  "isolation.level": "read_committed", "enable.partition.eof": True})  # fmt: skip
    c.assign([TopicPartition(topic, 0, 0)])
    last = None
    while True:
        m = c.poll(10)
        assert m is not None, "the read_committed consumer did not reach the end"
        if m.error() is None:
            last = m
        elif m.error().code() == KafkaError._PARTITION_EOF:  # type: ignore[union-attr]
            break
    assert last is not None
    next_offset = int(last.offset() or 0) + 1
    p.begin_transaction()  # the offsets go into a transaction that stays open: pending
    p.send_offsets_to_transaction([TopicPartition(topic, 0, next_offset)], c.consumer_group_metadata())
    (row,) = ins.group_offsets(cluster, group, topic)
    assert row.pending and row.committed is None
    p.commit_transaction()

    def settled():
        (r,) = ins.group_offsets(cluster, group, topic)
        return r if not r.pending else None

    # the markers follow EndTxn's answer within milliseconds; 30 s covers a leader being elected meanwhile
    row = wait_until(settled, timeout=30, what="the transaction's offsets to become stable (its markers)")
    assert row.committed == next_offset == 3
    assert row.records_left == 0 and row.offsets_behind == row.high_watermark - 3 > 0  # the markers and aborted
    c.close()
    cluster.admin.delete_topic(topic)
