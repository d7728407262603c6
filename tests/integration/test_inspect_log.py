"""Batches and producer state on disk, and the producer ids librdkafka got vs the metadata log's grants."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Producer

from eoslab import inspect as ins
from eoslab._wait import wait_until
from tests.integration._produce import produce_all

pytestmark = pytest.mark.cluster


@pytest.fixture
def topic(cluster, topic_name):
    cluster.admin.create_topic(topic_name, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    yield topic_name
    cluster.admin.delete_topic(topic_name)


@pytest.fixture
def dropped(cluster, topic_name):
    """The test creates ``topic_name`` its own way; it is deleted afterwards, pass or fail."""
    yield topic_name
    cluster.admin.delete_topic(topic_name)


def _produce(producer: Producer, topic: str, n: int, partition: int = 0) -> None:
    records = [{"key": f"k{i}".encode(), "value": f"v{i}".encode()} for i in range(n)]
    produce_all(producer, topic, records, partition=partition, headers=[("trace", b"1")])


def test_idempotent_batches_carry_pid_epoch_and_sequence_non_idempotent_carry_minus_one(cluster, topic):
    bs = cluster.bootstrap_servers()
    idem = ins.ObservedProducer(
        {
            "bootstrap.servers": bs,
            "enable.idempotence": True,  # PID + sequences
            "linger.ms": 50,
        }
    )  # the 3 records travel in one batch
    _produce(idem, topic, 3)
    _produce(idem, topic, 2)
    pid = idem.eos().producer_id
    assert pid >= 0
    plain = Producer(
        {
            "bootstrap.servers": bs,
            "enable.idempotence": False,  # librdkafka's default, made explicit
            "acks": "all",
            "linger.ms": 50,
        }
    )
    _produce(plain, topic, 2)

    on_leader = ins.batches(cluster, topic, 0, records=True)
    assert [
        (b.base_offset, b.count, b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) for b in on_leader
    ] == [(0, 3, pid, 0, 0, 2), (3, 2, pid, 0, 3, 4), (5, 2, -1, -1, -1, -1)]
    assert [r.sequence for b in on_leader for r in b.records] == [0, 1, 2, 3, 4, -1, -1]
    assert not any(b.is_transactional or b.is_control for b in on_leader)
    assert on_leader[0].records[0].header_keys == ("trace",)

    # Followers hold the same bytes: the same headers at the same file positions.
    def follower_caught_up() -> list[ins.Batch] | None:
        got = ins.batches(cluster, topic, 0, broker=3)
        return got if len(got) == 3 else None

    on_follower = wait_until(follower_caught_up, timeout=15, what=f"broker 3's copy of {topic}-0")
    assert on_follower is not None and [(b.position, b.producer_id, b.base_sequence, b.size) for b in on_follower] == [
        (b.position, b.producer_id, b.base_sequence, b.size) for b in on_leader
    ]

    # The broker's in-memory producer state: only the idempotent producer, last sequence 4.
    states = ins.describe_producers(cluster, topic, 0, broker=2)
    assert [(s.producer_id, s.producer_epoch, s.last_sequence, s.current_txn_start_offset) for s in states] == [
        (pid, 0, 4, None)
    ]
    df = ins.records_frame(ins.batches(cluster, topic, 0, data=True))
    assert list(df.value) == ["v0", "v1", "v2", "v0", "v1", "v0", "v1"]


def test_producer_state_snapshot_written_on_segment_roll(cluster, dropped):
    topic_name = dropped
    # segment.ms=100: the next append after 100 ms rolls the segment, and a roll writes
    # <offset>.snapshot with the producer state as of that offset.
    cluster.admin.create_topic(topic_name, replica_assignment=[[1, 2, 3]], config={"segment.ms": "100"})
    p = ins.ObservedProducer({"bootstrap.servers": cluster.bootstrap_servers(), "enable.idempotence": True})

    def rolled() -> bool:
        _produce(p, topic_name, 1)
        return bool(ins.partition_files(cluster, topic_name, 0, 1, suffix=".snapshot")[2])

    wait_until(rolled, timeout=20, interval=0.15, what=f"a segment roll of {topic_name}-0")
    pid = p.eos().producer_id
    entries = ins.producer_snapshots(cluster, topic_name, 0, broker=1)
    assert entries and {e.producer_id for e in entries} == {pid}
    first = entries[0]
    assert first.snapshot_offset >= 1 and first.last_offset == first.snapshot_offset - 1
    assert first.current_txn_first_offset is None and first.producer_epoch == 0
    assert ins.Rows(entries, ins.SnapshotEntry).to_frame().producer_id.tolist() == [pid] * len(entries)


def test_pids_that_producers_received_lie_in_granted_blocks(cluster, topic):
    bs = cluster.bootstrap_servers()
    txid = f"pid-{uuid.uuid4().hex[:8]}"
    txn = ins.ObservedProducer({"bootstrap.servers": bs, "transactional.id": txid, "client.id": txid}, debug="eos")
    txn.init_transactions(30)
    idem = ins.ObservedProducer({"bootstrap.servers": bs, "enable.idempotence": True})
    _produce(idem, topic, 1)
    views = {"transactional": txn.eos(), "idempotent": idem.eos()}
    assert all(v.idemp_state == "Assigned" and v.producer_id >= 0 for v in views.values()), views
    assert views["transactional"].txn_state == "Ready"
    # librdkafka's own debug line says the same as its statistics.
    assert (views["transactional"].producer_id, 0) in ins.acquired_pids(txn.log.lines)

    blocks = ins.producer_id_blocks(cluster)
    grants = [b for b in blocks if b.source == "log"]
    assert grants, "no ProducerIdsRecord in the metadata log"
    spans = sorted((b.first_producer_id, b.next_producer_id) for b in grants)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), f"overlapping grants: {spans}"
    assert all(b.next_producer_id % ins.PRODUCER_ID_BLOCK_SIZE == 0 for b in grants)
    for kind, view in views.items():
        block = ins.block_of(view.producer_id, blocks)
        assert block is not None, f"{kind} PID {view.producer_id} is in no granted block: {spans}"
    # A transactional producer's PID comes from its coordinator, out of that broker's own block.
    coordinator = ins.coordinator(cluster, txid).reported
    block = ins.block_of(views["transactional"].producer_id, grants)
    assert block is not None and block.broker_id == coordinator


def test_missing_partition_folder_is_a_sentence(cluster, dropped):
    topic_name = dropped
    cluster.admin.create_topic(topic_name, replica_assignment=[[1, 2], [2, 1]])
    with pytest.raises(ins.PartitionFolderMissing, match=r"has 2 partition\(s\)"):
        ins.batches(cluster, topic_name, 7, broker=1)
    with pytest.raises(ins.PartitionFolderMissing, match=r"its replicas are \[1, 2\]"):
        ins.batches(cluster, topic_name, 0, broker=3)


def test_unchanged_segments_are_read_from_the_cache(cluster, topic, monkeypatch):
    p = ins.ObservedProducer({"bootstrap.servers": cluster.bootstrap_servers(), "enable.idempotence": True})
    _produce(p, topic, 2)
    first = ins.batches(cluster, topic, 0, records=True)
    calls: list[tuple[str, ...]] = []
    real = cluster.tool

    def counted(*a: str, **kw: Any) -> str:
        calls.append(a)
        return real(*a, **kw)

    monkeypatch.setattr(cluster, "tool", counted)
    assert ins.batches(cluster, topic, 0, records=True) == first
    assert calls == [], "an unchanged segment must not start a JVM again"
    _produce(p, topic, 1)  # the active segment changes: size and mtime differ, so it is read again
    assert [b.count for b in ins.batches(cluster, topic, 0)] == [2, 1]
    assert len(calls) == 1
