"""Transactions on the real cluster: LSO vs HW, markers on disk, the coordinator's state history.

Timeouts: the markers and the Complete* state are written by the coordinator
AFTER EndTxn answered the producer, within milliseconds on a healthy cluster;
15 s leaves room for a busy 2-core machine without hiding a real hang.
"""

from __future__ import annotations

import uuid

import pytest

from eoslab import inspect as ins
from eoslab._wait import wait_until

pytestmark = pytest.mark.cluster

MARKER_WAIT = 15.0


@pytest.fixture
def two_partitions(cluster, topic_name):
    cluster.admin.create_topic(topic_name, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    yield topic_name
    cluster.admin.delete_topic(topic_name)


def _txn_producer(cluster, txid: str, **conf) -> ins.ObservedProducer:
    return ins.ObservedProducer(
        {
            "bootstrap.servers": cluster.bootstrap_servers(),
            "transactional.id": txid,  # implies enable.idempotence=true and acks=all
            "client.id": txid,
            **conf,
        }
    )


def test_lso_stays_behind_the_high_watermark_until_the_commit_markers(cluster, two_partitions):
    topic = two_partitions
    p = _txn_producer(cluster, f"lso-{uuid.uuid4().hex[:8]}")
    p.init_transactions(30)
    p.begin_transaction()
    for _ in range(3):
        p.produce(topic, b"x", partition=0)
    assert p.flush(30) == 0
    open_ = {o.partition: o for o in ins.offsets(cluster, topic)}
    # acks=all: the produce answer came after the HW passed the 3 records.
    assert (open_[0].log_start, open_[0].high_watermark, open_[0].last_stable) == (0, 3, 0)
    assert open_[0].open_gap == 3
    assert (open_[1].high_watermark, open_[1].last_stable) == (0, 0)  # untouched partition: nothing open
    producers = ins.describe_producers(cluster, topic, 0)
    assert [(s.producer_id, s.current_txn_start_offset) for s in producers] == [(p.eos().producer_id, 0)]

    p.commit_transaction(30)

    def closed() -> ins.PartitionOffsets | None:
        o = ins.partition_offsets(cluster, topic, 0)
        return o if o.open_gap == 0 else None

    done = wait_until(
        closed, timeout=MARKER_WAIT, what=f"the LSO of {topic}-0 to reach the high watermark after commit"
    )
    assert done is not None and (done.high_watermark, done.last_stable) == (4, 4)  # the COMMIT marker took offset 3


def test_commit_and_abort_markers_on_disk_and_the_state_history(cluster, two_partitions):
    topic = two_partitions
    txid = f"hist-{uuid.uuid4().hex[:8]}"
    p = _txn_producer(cluster, txid)
    p.init_transactions(30)
    pid = p.eos().producer_id
    p.begin_transaction()
    p.produce(topic, b"c0", partition=0)
    p.produce(topic, b"c1", partition=1)
    p.commit_transaction(30)
    p.begin_transaction()
    p.produce(topic, b"a0", partition=0)
    assert p.flush(30) == 0
    p.abort_transaction(30)

    def history() -> list[ins.TxnLogEntry] | None:
        h = ins.transaction_history(cluster, txid)
        return h if h and h[-1].state == "CompleteAbort" else None

    hist = wait_until(history, timeout=MARKER_WAIT, what=f"CompleteAbort of {txid} in __transaction_state")
    assert hist is not None
    # librdkafka speaks the original protocol (no KIP-890 epoch bump per transaction): one epoch throughout.
    assert [h.state for h in hist] == [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "CompleteCommit",
        "Ongoing",
        "PrepareAbort",
        "CompleteAbort",
    ]
    assert {(h.producer_id, h.producer_epoch) for h in hist} == {(pid, 0)}
    assert sorted(hist[1].partitions) == [f"{topic}-0", f"{topic}-1"]
    assert hist[4].partitions == (f"{topic}-0",)
    assert [h.offset for h in hist] == sorted(h.offset for h in hist)

    b0 = ins.batches(cluster, topic, 0, data=True)
    assert [(b.base_offset, b.is_transactional, b.is_control, b.marker) for b in b0] == [
        (0, True, False, None),
        (1, True, True, "COMMIT"),
        (2, True, False, None),
        (3, True, True, "ABORT"),
    ]
    assert all(b.producer_id == pid and b.producer_epoch == 0 for b in b0)
    assert b0[2].records[0].value == "a0"  # aborted data stays on disk
    assert [b.base_sequence for b in b0] == [0, -1, 1, -1]  # markers carry no sequence
    b1 = ins.batches(cluster, topic, 1, broker=3)  # a follower's copy
    assert [b.marker for b in b1] == [None, "COMMIT"]

    desc = ins.describe_transaction(cluster, txid)
    assert (desc.producer_id, desc.producer_epoch, desc.state, desc.partitions) == (pid, 0, "CompleteAbort", ())
    assert desc.coordinator == ins.coordinator(cluster, txid).reported
    assert txid in {t.transactional_id for t in ins.list_transactions(cluster)}


def test_describe_unknown_transactional_id(cluster):
    with pytest.raises(ins.TransactionNotFound, match="never ran init_transactions"):
        ins.describe_transaction(cluster, f"never-{uuid.uuid4().hex[:8]}")
