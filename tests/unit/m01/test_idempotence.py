"""Module 01's lesson, on recorded real outputs (no cluster): the restarted broker's producer-state recovery and
the opening duplicate's sentence. Lab 01's checks: test_lab01_parts.py."""

from __future__ import annotations

from pathlib import Path

from eoslab.m01_idempotence import producer_state

DATA = Path(__file__).resolve().parents[2] / "data" / "demos"


# -- lesson 01 step 4: the restarted broker's producer-state recovery ------------------------------


def test_recovery_after_a_crash_then_after_a_clean_stop():
    text = (DATA / "broker1_restarts.log").read_text()
    clean = producer_state.parse_recovery(text, "snap-b5edd5", 0, broker=1)
    assert [(e.event, e.offset) for e in clean] == [
        ("snapshot deleted", 3),
        ("state up to offset", 5),
        ("rebuild from offset", 5),
        ("snapshot loaded", 5),  # written at the clean shutdown, at the log end: nothing left to read
        ("recovered", 5),
    ]
    crash_part = text[: text.rindex("Starting broker")]
    crash = producer_state.parse_recovery(crash_part, "snap-b5edd5", 0, broker=1)
    assert [(e.event, e.offset) for e in crash] == [
        ("state up to offset", 0),  # the unclean start: no snapshot, the log read from offset 0
        ("rebuild from offset", 0),
        ("recovered", 0),
        ("snapshot written", 3),
        ("state up to offset", 3),
        ("rebuild from offset", 3),
        ("snapshot loaded", 3),
        ("recovered", 3),
    ]
    assert crash[3].detail == "producers=1" and crash[-1].detail == "snapshot_ms=3, log_ms=0"
    assert crash[0].time == "04:36:48,556"


def test_recovery_of_another_partition_or_broker_is_empty():
    text = (DATA / "broker1_restarts.log").read_text()
    assert producer_state.parse_recovery(text, "snap-b5edd5", 1) == []
    assert producer_state.parse_recovery(text, "snap-b5edd", 0) == []
    assert producer_state.parse_recovery(text, "snap-b5edd5", 0, broker=2)  # no start of broker 2: whole text


def test_recovery_explained_in_sentences():
    text = (DATA / "broker1_restarts.log").read_text()
    crash = producer_state.parse_recovery(text[: text.rindex("Starting broker")], "snap-b5edd5", 0, broker=1)
    assert producer_state.explain(crash) == [
        "State up to offset 0: no snapshot (an empty state), nothing left to read.",
        "Read the batches from 0 up to 3 and wrote a snapshot at 3.",
        "State up to offset 3: the snapshot at 3, nothing left to read.",
    ]
    clean = producer_state.parse_recovery(text, "snap-b5edd5", 0, broker=1)
    assert producer_state.explain(clean) == [
        "State up to offset 5: the snapshot at 5, nothing left to read.",
        "Deleted the snapshot(s) at 3.",
    ]
    older = [
        producer_state.RecoveryEvent("", "state up to offset", 9, ""),
        producer_state.RecoveryEvent("", "rebuild from offset", 4, ""),
        producer_state.RecoveryEvent("", "snapshot loaded", 4, ""),
        producer_state.RecoveryEvent("", "recovered", 4, ""),
    ]
    assert producer_state.explain(older) == ["State up to offset 9: the snapshot at 4, then the batches from 4 to 9."]


def test_the_duplicate_of_module_01_is_said_only_when_the_log_shows_it():
    """Module 01 opens on this sentence: it must hold on a run where the duplicate did not happen."""
    import pandas as pd

    from eoslab.m01_idempotence.lesson import Delivery, duplicate_sentence

    frame = pd.DataFrame({"base_offset": [3, 7, 8], "value": ["other", "plain r1", "plain r1"]})
    told = Delivery("demo", 0, 8, None)
    said = duplicate_sentence(frame, "plain r1", told)
    assert said.startswith(
        "This run showed it: 2 copies of one record, at offsets [7, 8]; the client was told offset 8"
    )
    assert "(the last copy's)" in said
    assert "(the last copy's)" not in duplicate_sentence(frame, "plain r1", Delivery("demo", 0, 7, None))
    once = duplicate_sentence(frame, "other", Delivery("demo", 0, 3, None))
    assert once.startswith("This run did not show it: 1 copy of the record (offsets [3])"), once
    failed = duplicate_sentence(frame, "missing", Delivery("demo", 0, -1, "_MSG_TIMED_OUT"))
    assert failed.startswith("This run did not show it: 0 copies") and "_MSG_TIMED_OUT" in failed
