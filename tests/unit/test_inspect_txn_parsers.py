"""Transaction views of `eoslab.inspect` on outputs recorded from the real 4.1.2 cluster
(tests/data/inspect/record_transactions.py; librdkafka 2.16.0 and the Java 4.1.2 client).

What the recording did, on a topic whose partition 0 is read here: librdkafka
committed, aborted, aborted (flushing first, so the aborted data is on disk);
the Java client committed, committed, aborted; a librdkafka zombie wrote one
record and was fenced by a successor; a producer with a 2 s transaction
timeout was aborted by its coordinator.
"""

from __future__ import annotations

import json
from pathlib import Path

from eoslab import inspect as ins

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"


def read(name: str) -> str:
    return (DATA / name).read_text()


def history(tid_prefix: str) -> list[ins.TxnLogEntry]:
    log = ins.parse_transaction_log(ins.parse_dump(read("dump_txn_log_tv2.txt")))
    return [e for e in log if e.transactional_id.startswith(tid_prefix)]


def test_librdkafka_keeps_one_epoch_and_writes_no_client_version():
    h = history("rec-rdkafka-")
    assert [e.state for e in h] == [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "CompleteCommit",
        "Ongoing",
        "PrepareAbort",
        "CompleteAbort",
        "Ongoing",
        "PrepareAbort",
        "CompleteAbort",
    ]
    assert {e.producer_epoch for e in h} == {0}
    assert {e.client_transaction_version for e in h} == {None}
    assert [e.offset for e in h] == list(range(10))


def test_java_tv2_bumps_the_epoch_at_every_end_and_says_so():
    h = history("rec-java-")
    states = [(e.state, e.producer_epoch) for e in h]
    # The partitions are enrolled one by one (by the partition leaders, on Produce): two Ongoing records.
    assert states == [
        ("Empty", 0),
        ("Ongoing", 0),
        ("Ongoing", 0),
        ("PrepareCommit", 1),
        ("CompleteCommit", 1),
        ("Ongoing", 1),
        ("Ongoing", 1),
        ("PrepareCommit", 2),
        ("CompleteCommit", 2),
        ("Ongoing", 2),
        ("Ongoing", 2),
        ("PrepareAbort", 3),
        ("CompleteAbort", 3),
    ]
    assert [e.client_transaction_version for e in h] == [None] + [2] * 12  # InitProducerId does not say
    assert len({e.producer_id for e in h}) == 1
    # No epoch overflow happened: the KIP-890 producer-id rotation fields stay absent.
    assert {(e.previous_producer_id, e.next_producer_id, e.next_producer_epoch) for e in h} == {(None, None, None)}


def test_a_fence_reads_ongoing_then_abort_at_e_plus_1_then_empty_at_e_plus_2():
    h = history("rec-zombie-")
    assert [(e.state, e.producer_epoch, e.client_transaction_version) for e in h] == [
        ("Empty", 0, None),
        ("Ongoing", 0, None),
        ("PrepareAbort", 1, 2),  # the coordinator's own abort: the server's version, whatever the client
        ("CompleteAbort", 1, 2),
        ("Empty", 2, 2),  # the successor's InitProducerId that succeeded
    ]
    assert "PrepareEpochFence" not in {e.state for e in h}  # an in-memory state, never written


def test_a_timed_out_transaction_is_aborted_by_the_coordinator_with_a_bumped_epoch():
    h = history("rec-hung-")
    assert [(e.state, e.producer_epoch, e.client_transaction_version, e.timeout_ms) for e in h] == [
        ("Empty", 0, None, 2000),
        ("Ongoing", 0, None, 2000),
        ("PrepareAbort", 1, 2, 2000),
        ("CompleteAbort", 1, 2, 2000),
    ]
    ongoing, prepare = h[1], h[2]
    assert prepare.append_time_ms - ongoing.append_time_ms >= 2000  # not before the timeout


def test_markers_with_type_epochs_and_coordinator_epoch():
    batches = [b for f in ins.parse_dump(read("dump_markers_tv2.txt")) for b in f.batches]
    marks = ins.markers_from(batches, "rec-tv2", 0, broker=1)
    assert [(m.offset, m.marker, m.producer_epoch) for m in marks] == [
        (1, "COMMIT", 0),  # librdkafka: the epoch of the whole session
        (3, "ABORT", 0),
        (5, "ABORT", 0),
        (7, "COMMIT", 1),  # Java TV2: each marker carries the epoch bumped by its EndTxn
        (9, "COMMIT", 2),
        (11, "ABORT", 3),
        (13, "ABORT", 1),  # the fenced zombie's transaction, aborted at e+1
    ]
    assert {m.coordinator_epoch for m in marks} == {0}
    java = [b for b in batches if not b.is_control and b.records[0].value and b.records[0].value.startswith("java")]
    assert [(b.producer_epoch, b.base_sequence) for b in java] == [(0, 0), (1, 0), (2, 0)]  # new epoch, seq 0
    only_zombie = ins.markers_from(batches, "rec-tv2", 0, 1, producer_ids=[marks[-1].producer_id])
    assert [m.offset for m in only_zombie] == [13]


def test_txnindex_lists_every_aborted_transaction_with_its_range():
    (f,) = ins.parse_dump(read("dump_txnindex.txt"))
    assert [(a.first_offset, a.last_offset, a.last_stable_offset) for a in f.aborted] == [
        (2, 3, 4),
        (4, 5, 6),
        (10, 11, 12),
        (12, 13, 14),
    ]
    assert all(a.version == 0 for a in f.aborted) and not f.notes
    # The same aborts as the ABORT markers of the log, no more, no fewer.
    batches = [b for d in ins.parse_dump(read("dump_markers_tv2.txt")) for b in d.batches]
    aborts = [m.offset for m in ins.markers_from(batches, "rec-tv2", 0, 1) if m.marker == "ABORT"]
    assert [a.last_offset for a in f.aborted] == aborts


def test_finalized_features_from_api_versions_and_from_feature_command():
    body = json.loads(read("api_versions_v4.json"))
    via_api = {f.name: f.finalized for f in ins.features_from_api_versions(body)}
    assert via_api["transaction.version"] == 2 and via_api["group.version"] == 1
    assert "kraft.version" not in via_api  # a level-0 feature is left out of ApiVersions
    via_tool = {f.name: f for f in ins.parse_feature_describe(read("features_describe.txt"))}
    assert via_tool["kraft.version"].finalized == 0
    assert via_tool["transaction.version"].finalized == 2 and via_tool["transaction.version"].supported_max == 2
    assert via_tool["metadata.version"].finalized == "4.1-IV1"
    assert {n for n, f in via_tool.items() if f.finalized} == set(via_api)


def test_epoch_exhaustion_rotates_the_producer_id_and_4_1_2_writes_no_rotation_fields():
    # Recorded by hand (see tests/data/inspect/README.md): 32765 raw InitProducerId requests took the
    # id to epoch 32765, then the Java 4.1 client committed three transactions (TV2: +1 per end).
    log = ins.parse_transaction_log(ins.parse_dump(read("dump_txn_log_overflow.txt")), "rec-overflow-1")
    tail = [(e.state, e.producer_id, e.producer_epoch) for e in log[-10:]]
    assert tail == [
        ("Empty", 44, 32765),
        ("Ongoing", 44, 32765),
        ("PrepareCommit", 44, 32766),
        ("CompleteCommit", 44, 32766),
        ("Ongoing", 44, 32766),
        ("PrepareCommit", 44, 32767),  # the int16's last value
        ("CompleteCommit", 46, 0),  # a new producer id, epoch 0: the id's transactions go on
        ("Ongoing", 46, 0),
        ("PrepareCommit", 46, 1),
        ("CompleteCommit", 46, 1),
    ]
    # The schema has PreviousProducerId / NextProducerId / NextProducerEpoch as tagged fields, but the 4.1.2
    # coordinator never sets them (TransactionLog.valueToBytes writes ClientTransactionVersion only).
    assert {(e.previous_producer_id, e.next_producer_id, e.next_producer_epoch) for e in log} == {(None, None, None)}
    assert log[0].producer_epoch == 0 and log[0].producer_id == 44
