"""The inspect parsers on outputs recorded from the real 4.1.2 cluster (tests/data/inspect/, see its README)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from eoslab import inspect as ins
from eoslab.inspect._cli_table import parse_tsv
from eoslab.inspect._transactions import parse_describe, parse_list

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"


def read(name: str) -> str:
    return (DATA / name).read_text()


def batches_of(name: str) -> list[ins.Batch]:
    return [b for f in ins.parse_dump(read(name)) for b in f.batches]


def test_one_file_per_dumping_header():
    files = ins.parse_dump(read("dump_batches_data.txt"))
    assert [Path(f.path).parent.name for f in files] == ["rec-648f64-0", "rec-648f64-1"]
    assert all(not f.notes for f in files)


def test_idempotent_batch_has_pid_epoch_and_sequences_from_zero():
    b = batches_of("dump_batches_data.txt")[0]
    assert (b.base_offset, b.last_offset, b.count) == (0, 2, 3)
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) == (0, 0, 0, 2)
    assert not b.is_transactional and not b.is_control and b.marker is None
    assert [r.sequence for r in b.records] == [0, 1, 2]
    assert [(r.key, r.value) for r in b.records] == [("k0", "v0"), ("k1", "v1"), ("k2", "v2")]
    assert b.records[0].header_keys == ("h",)
    assert b.timestamp_type == "CreateTime" and b.size == 106 and b.compression == "none"


def test_non_idempotent_batch_carries_minus_one():
    b = batches_of("dump_batches_data.txt")[1]
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) == (-1, -1, -1, -1)
    assert [r.sequence for r in b.records] == [-1, -1]


def test_transactional_data_then_commit_and_abort_markers():
    bs = batches_of("dump_batches_data.txt")[:6]
    txn = bs[2]
    assert txn.is_transactional and not txn.is_control and (txn.producer_id, txn.base_sequence) == (1, 0)
    commit, aborted, abort = bs[3], bs[4], bs[5]
    assert commit.is_control and commit.marker == "COMMIT" and commit.coordinator_epoch == 0
    assert commit.base_sequence == -1 and commit.records[0].key is None  # a marker has no key/value text
    # The aborted record stays on disk; its batch continues the producer's sequence (2).
    assert aborted.records[0].value == "abort" and aborted.base_sequence == 2
    assert abort.is_control and abort.marker == "ABORT" and abort.base_offset == 9


def test_without_print_data_log_records_have_no_data_but_markers_remain():
    bs = batches_of("dump_batches_follower.txt")
    assert all(r.key is None and r.value is None for b in bs for r in b.records)
    assert [b.marker for b in bs if b.is_control] == ["COMMIT", "ABORT"]
    # The follower's copy (broker 2) has the leader's headers byte for byte.
    leader = batches_of("dump_batches_data.txt")[:6]
    assert [(b.base_offset, b.producer_id, b.base_sequence, b.position) for b in bs] == [
        (b.base_offset, b.producer_id, b.base_sequence, b.position) for b in leader
    ]


def test_producer_snapshot_files():
    files = ins.parse_dump(read("dump_producer_snapshots.txt"))
    first, second = files
    assert [e.producer_id for e in first.snapshot] == [2]
    e = first.snapshot[0]
    assert e.snapshot_offset == 1 and e.current_txn_first_offset == 0 and e.coordinator_epoch == -1
    assert [(s.producer_id, s.current_txn_first_offset, s.last_offset) for s in second.snapshot] == [
        (2, 0, 0),
        (1000, None, 1),
    ]
    assert second.snapshot[1].snapshot_offset == 2


def test_transaction_log_history_of_a_librdkafka_commit_then_abort():
    files = ins.parse_dump(read("dump_transaction_log.txt"))
    hist = ins.parse_transaction_log(files, "rec-tx-f052e0")
    assert [h.state for h in hist] == [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "CompleteCommit",
        "Ongoing",
        "PrepareAbort",
        "CompleteAbort",
    ]
    assert [h.offset for h in hist] == list(range(7))
    assert {(h.producer_id, h.producer_epoch) for h in hist} == {(1, 0)}  # librdkafka: no epoch bump per txn
    assert hist[1].partitions == ("rec-648f64-0", "rec-648f64-1")
    assert hist[0].partitions == () and hist[0].start_ms == -1
    assert hist[3].partitions == ()


def test_transaction_log_history_of_a_timed_out_transaction():
    hist = ins.parse_transaction_log(ins.parse_dump(read("dump_transaction_log.txt")), "snap-bdb324-tx")
    assert [h.state for h in hist] == ["Empty", "Ongoing", "PrepareAbort", "CompleteAbort"]
    # The coordinator's own abort on timeout bumps the epoch (fencing the producer) and logs TV2.
    assert [h.producer_epoch for h in hist] == [0, 0, 1, 1]
    assert [h.client_transaction_version for h in hist] == [None, None, 2, 2]


def test_transaction_log_all_ids():
    hist = ins.parse_transaction_log(ins.parse_dump(read("dump_transaction_log.txt")))
    assert {h.transactional_id for h in hist} == {"rec-tx-f052e0", "snap-bdb324-tx"}


def test_cluster_metadata_producer_id_blocks():
    blocks = ins.parse_pid_blocks(ins.parse_dump(read("dump_cluster_metadata.txt")))
    assert [(b.broker_id, b.next_producer_id, b.offset) for b in blocks] == [
        (3, 1000, 286),
        (2, 2000, 331),
        (1, 3000, 908),
    ]
    b = blocks[0]
    assert (b.first_producer_id, b.last_producer_id, b.broker_epoch, b.source) == (0, 999, 13, "log")
    assert 0 in b and 999 in b and 1000 not in b
    assert ins.block_of(1000, blocks) is blocks[1]
    assert ins.block_of(5000, blocks) is None
    assert b.append_time_ms == 1795646594200


def test_a_metadata_snapshot_repeats_the_newest_grant_without_its_broker():
    snapshot = ins.parse_dump(read("dump_metadata_snapshot.txt"))
    (alone,) = ins.parse_pid_blocks(snapshot)
    # Seen on the cluster: the image keeps only NextProducerId, so the snapshot's record has no grantee.
    assert (alone.broker_id, alone.broker_epoch, alone.next_producer_id, alone.source) == (-1, -1, 139000, "snapshot")
    log = ins.parse_dump(read("dump_cluster_metadata.txt"))
    # Its grant is no longer in the log: it stays, in grant order (after the log's older grants).
    assert [b.next_producer_id for b in ins.parse_pid_blocks(log + snapshot)] == [1000, 2000, 3000, 139000]
    # A snapshot of a grant the log still holds is a copy: the log's record (with its broker) counts.
    copy = [
        replace(
            f,
            batches=[
                replace(
                    b,
                    records=tuple(
                        replace(r, value=r.value.replace("139000", "2000")) if r.value else r for r in b.records
                    ),
                )
                for b in f.batches
            ],
        )
        for f in snapshot
    ]
    blocks = ins.parse_pid_blocks(log + copy)
    assert [(b.broker_id, b.next_producer_id, b.source) for b in blocks] == [
        (3, 1000, "log"),
        (2, 2000, "log"),
        (1, 3000, "log"),
    ]
    block = ins.block_of(1500, blocks)
    assert block is not None and block.broker_id == 2


def test_metadata_leader_change_is_a_control_record():
    files = ins.parse_dump(read("dump_cluster_metadata.txt"))
    first = files[0].batches[0]
    assert first.is_control and first.records[0].control_type == "LeaderChange"
    assert '"leaderId":101' in (first.records[0].control_data or "")


def test_describe_producers_table():
    rows = ins.parse_describe_producers(read("describe_producers_open.txt"), "t", 0, broker=3)
    assert len(rows) == 1
    r = rows[0]
    assert (r.producer_id, r.producer_epoch, r.last_sequence, r.current_txn_start_offset) == (5, 0, 2, 0)
    assert r.coordinator_epoch == -1 and r.broker == 3
    done = ins.parse_describe_producers(read("describe_producers_rec.txt"), "rec-648f64", 0)
    assert [(p.producer_id, p.current_txn_start_offset, p.coordinator_epoch) for p in done] == [
        (0, None, -1),
        (1, None, 0),
    ]


def test_transactions_list_and_describe():
    listed = parse_list(read("transactions_list.txt"))
    assert {(t.transactional_id, t.coordinator, t.producer_id, t.state) for t in listed} == {
        ("snap-bdb324-tx", 3, 2, "CompleteAbort"),
        ("rec-tx-f052e0", 3, 1, "CompleteAbort"),
    }
    d = parse_describe(read("transactions_describe_open.txt"))
    assert (d.coordinator, d.producer_id, d.producer_epoch, d.state, d.timeout_ms) == (3, 5, 0, "Ongoing", 60000)
    assert sorted(d.partitions) == ["open-c59bf8-0", "open-c59bf8-1"]
    done = parse_describe(read("transactions_describe.txt"))
    assert done.partitions == () and done.producer_epoch == 1


def test_tsv_pads_missing_cells():
    assert parse_tsv("A\tB\t\n1\t\n") == [{"A": "1", "B": ""}]
    assert parse_tsv("") == []


def test_record_key_with_payload_inside_json_is_not_split_there():
    text = (
        "Dumping /x/t-0/00000000000000000000.log\n"
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 5 size: 1 magic: 2 compresscodec: none "
        "crc: 1 isvalid: true\n"
        "| offset: 0 CreateTime: 5 keySize: 3 valueSize: -1 sequence: -1 headerKeys: [a,b] "
        'key: {"k":" payload: x"} payload: <DELETE>\n'
    )
    r = ins.parse_dump(text)[0].batches[0].records[0]
    assert r.key == '{"k":" payload: x"}' and r.value == "<DELETE>" and r.value_json() is None
    assert r.header_keys == ("a", "b")


def test_frames_have_columns_even_when_empty():
    df = ins.Rows([], ins.Batch).to_frame()
    assert "marker" in df.columns and "records" not in df.columns
    blocks = ins.parse_pid_blocks(ins.parse_dump(read("dump_cluster_metadata.txt")))
    df = ins.Rows(blocks, ins.ProducerIdBlock).to_frame()
    assert list(df.first_producer_id) == [0, 1000, 2000]


def test_frame_rejects_other_things():
    with pytest.raises(TypeError, match="dataclasses or dicts"):
        ins.frame([1])


def test_describe_producers_after_the_coordinator_aborted_on_timeout():
    # Asked of a follower (--broker-id 2): the ABORT marker was written with the bumped epoch 1,
    # which resets the producer's sequence (-1) on that partition.
    rows = ins.parse_describe_producers(read("describe_producers.txt"), "snap-bdb324", 0, broker=2)
    assert [
        (r.producer_id, r.producer_epoch, r.last_sequence, r.coordinator_epoch, r.current_txn_start_offset)
        for r in rows
    ] == [(2, 1, -1, 0, None), (1000, 0, 1, -1, None)]


def test_checkpoint_snapshot_control_records_and_feature_levels():
    # A .checkpoint (here the formatted bootstrap snapshot) prints "SnapshotHeader {..}" without a colon.
    files = ins.parse_dump(read("dump_bootstrap_checkpoint.txt"))
    bs = files[0].batches
    assert [r.control_type for r in bs[0].records] == ["SnapshotHeader"]
    assert [r.control_type for r in bs[-1].records] == ["SnapshotFooter"]
    features = {v["data"]["name"]: v["data"]["featureLevel"] for r in bs[1].records if (v := r.value_json())}
    assert features["transaction.version"] == 2  # KIP-890 part 2 is on in a new 4.1 cluster
    assert ins.parse_pid_blocks(files) == []
    assert files[0].notes == ["KRaft bootstrap snapshot"]
