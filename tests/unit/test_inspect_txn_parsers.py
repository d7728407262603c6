"""Transaction views of `eoslab.inspect` on outputs recorded from the real cluster, on two releases:
4.1.2 (tests/data/inspect/) and 4.4.0 (tests/data/inspect/kafka-4.4.0/), both by
tests/data/inspect/record_transactions.py with librdkafka 2.16.0 and the Java client of the release.
Kafka 4.4's decoder prints ``transactionStatus`` as a name where 4.1-4.3 printed a byte (KAFKA-20712),
and 4.3+ writes ``previousProducerId`` on every record (KAFKA-20310): the same histories either way.

What the recording did, on a topic whose partition 0 is read here: librdkafka
committed, aborted, aborted (flushing first, so the aborted data is on disk);
the Java client committed, committed, aborted; a librdkafka zombie wrote one
record and was fenced by a successor; a producer with a 2 s transaction
timeout was aborted by its coordinator.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eoslab import inspect as ins

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"
RECORDINGS = {"4.1.2": DATA, "4.4.0": DATA / "kafka-4.4.0"}
"""Kafka release -> the folder of its recording."""


@pytest.fixture(params=sorted(RECORDINGS))
def release(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def read(name: str, release: str = "4.1.2") -> str:
    return (RECORDINGS[release] / name).read_text()


def history(tid_prefix: str, release: str = "4.1.2") -> list[ins.TxnLogEntry]:
    log = ins.parse_transaction_log(ins.parse_dump(read("dump_txn_log_tv2.txt", release)))
    return [e for e in log if e.transactional_id.startswith(tid_prefix)]


def test_the_status_is_a_byte_before_4_4_and_a_name_from_4_4_on():
    assert '"transactionStatus":2,' in read("dump_txn_log_tv2.txt", "4.1.2")
    assert '"transactionStatus":"PrepareCommit",' in read("dump_txn_log_tv2.txt", "4.4.0")
    assert [ins.txn_state_name(s) for s in (0, 2, 7, "Ongoing", "CompleteAbort")] == [
        "Empty",
        "PrepareCommit",
        "PrepareEpochFence",
        "Ongoing",
        "CompleteAbort",
    ]
    assert [ins.txn_state_name(s) for s in (8, -1, "Frozen")] == ["unknown(8)", "unknown(-1)", "unknown(Frozen)"]


def test_librdkafka_keeps_one_epoch_and_writes_no_client_version(release: str):
    h = history("rec-rdkafka-", release)
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


def test_java_tv2_bumps_the_epoch_at_every_end_and_says_so(release: str):
    h = history("rec-java-", release)
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
    (pid,) = {e.producer_id for e in h}
    # No epoch overflow happened: 4.1.2 writes no rotation field; 4.3+ writes previousProducerId on every
    # record (KAFKA-20310), here the id itself, and nextProducerId only when the epoch overflows.
    rotation = {(e.previous_producer_id, e.next_producer_id, e.next_producer_epoch) for e in h}
    assert rotation == ({(None, None, None)} if release == "4.1.2" else {(pid, None, None)})


def test_a_fence_reads_ongoing_then_abort_at_e_plus_1_then_empty_at_e_plus_2(release: str):
    h = history("rec-zombie-", release)
    assert [(e.state, e.producer_epoch, e.client_transaction_version) for e in h] == [
        ("Empty", 0, None),
        ("Ongoing", 0, None),
        ("PrepareAbort", 1, 2),  # the coordinator's own abort: the server's version, whatever the client
        ("CompleteAbort", 1, 2),
        ("Empty", 2, 2),  # the successor's InitProducerId that succeeded
    ]
    assert "PrepareEpochFence" not in {e.state for e in h}  # an in-memory state, never written


def test_a_timed_out_transaction_is_aborted_by_the_coordinator_with_a_bumped_epoch(release: str):
    h = history("rec-hung-", release)
    assert [(e.state, e.producer_epoch, e.client_transaction_version, e.timeout_ms) for e in h] == [
        ("Empty", 0, None, 2000),
        ("Ongoing", 0, None, 2000),
        ("PrepareAbort", 1, 2, 2000),
        ("CompleteAbort", 1, 2, 2000),
    ]
    ongoing, prepare = h[1], h[2]
    assert prepare.append_time_ms - ongoing.append_time_ms >= 2000  # not before the timeout


def test_markers_with_type_epochs_and_coordinator_epoch(release: str):
    batches = [b for f in ins.parse_dump(read("dump_markers_tv2.txt", release)) for b in f.batches]
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


def test_txnindex_lists_every_aborted_transaction_with_its_range(release: str):
    (f,) = ins.parse_dump(read("dump_txnindex.txt", release))
    assert [(a.first_offset, a.last_offset, a.last_stable_offset) for a in f.aborted] == [
        (2, 3, 4),
        (4, 5, 6),
        (10, 11, 12),
        (12, 13, 14),
    ]
    assert all(a.version == 0 for a in f.aborted) and not f.notes
    # The same aborts as the ABORT markers of the log, no more, no fewer.
    batches = [b for d in ins.parse_dump(read("dump_markers_tv2.txt", release)) for b in d.batches]
    aborts = [m.offset for m in ins.markers_from(batches, "rec-tv2", 0, 1) if m.marker == "ABORT"]
    assert [a.last_offset for a in f.aborted] == aborts


def test_finalized_features_from_api_versions_and_from_feature_command(release: str):
    body = json.loads(read("api_versions_v4.json", release))
    via_api = {f.name: f.finalized for f in ins.features_from_api_versions(body)}
    assert via_api["transaction.version"] == 2 and via_api["group.version"] == 1
    assert "kraft.version" not in via_api  # a level-0 feature is left out of ApiVersions
    # 4.1.2's FeatureCommand separates the columns with tabs, 4.4.0's pads them with spaces.
    via_tool = {f.name: f for f in ins.parse_feature_describe(read("features_describe.txt", release))}
    assert via_tool["kraft.version"].finalized == 0
    assert via_tool["transaction.version"].finalized == 2 and via_tool["transaction.version"].supported_max == 2
    assert via_tool["metadata.version"].finalized == {"4.1.2": "4.1-IV1", "4.4.0": "4.4-IV2"}[release]
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


def test_epoch_exhaustion_on_4_4_0_names_the_next_producer_id_before_the_move():
    # tests/data/inspect/record_overflow.py: 32765 raw InitProducerId requests, then the 4.4.0 Java client's
    # InitProducerId and three commits. The move itself is as on 4.1.2; what the records say of it is new
    # (KAFKA-20310): the PrepareCommit at 32767 names the id to come, the CompleteCommit the id before.
    text = read("dump_txn_log_overflow.txt", "4.4.0")
    log = ins.parse_transaction_log(ins.parse_dump(text), "rec-overflow-1")
    old, new = log[0].producer_id, log[-1].producer_id
    assert old is not None and new is not None and new != old
    tail = [(e.state, e.producer_id, e.producer_epoch, e.previous_producer_id, e.next_producer_id) for e in log[-10:]]
    assert tail == [
        ("Empty", old, 32765, old, None),
        ("Ongoing", old, 32765, old, None),
        ("PrepareCommit", old, 32766, old, None),
        ("CompleteCommit", old, 32766, old, None),
        ("Ongoing", old, 32766, old, None),
        ("PrepareCommit", old, 32767, old, new),  # the int16's last value, and the id the commit completes under
        ("CompleteCommit", new, 0, old, None),  # a new producer id at epoch 0; the old one remembered
        ("Ongoing", new, 0, new, None),
        ("PrepareCommit", new, 1, new, None),
        ("CompleteCommit", new, 1, new, None),
    ]
    assert {e.next_producer_epoch for e in log} == {None}  # written by no record of 4.4.0
    assert log[0].producer_epoch == 0 and len(log) == 24  # the first and last 12 records are kept
