"""The pure logic behind lab 01 and its lesson, on recorded real outputs (no cluster). Module 02's: tests/unit/m02/."""

from __future__ import annotations

import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from eoslab.demos import producer_state
from eoslab.grading import _lab01_cases as cases

DATA = Path(__file__).resolve().parents[1] / "data" / "demos"


# -- lab 01 task 3: who leads next ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "isr", "killed", "leader"),
    [
        ([1, 3, 2], [1, 2, 3], 1, 3),  # assigned order, not id order
        ([2, 3, 1], [1, 3, 2], 2, 3),
        ([2, 3, 1], [1, 2], 2, 1),  # 3 is out of the ISR
        ([4, 5, 1], [5, 4], 5, 4),  # the dead leader was not the preferred one
        ([1, 2, 3], [1], 1, None),  # nobody eligible: no leader (unclean election is off)
    ],
)
def test_elect_takes_the_first_assigned_replica_in_the_isr(replicas, isr, killed, leader):
    assert cases.elect(replicas, isr, killed) == leader


@pytest.mark.parametrize("seed", range(20))
def test_every_decoy_rule_loses_on_the_drawn_cases(seed):
    drawn = cases.leader_cases(random.Random(seed))
    assert len(drawn) == 6
    for name, rule in cases.DECOYS.items():
        assert any(rule(c) != c.expected for c in drawn), name
    for c in drawn:
        assert c.killed in c.isr and c.expected == cases.elect(c.replicas, c.isr, c.killed)


# -- lab 01 task 2: what a wrong duplicate group mixed up ------------------------------------------


def _batch(offset, pid, epoch=-1, seq=-1, value="v"):
    return SimpleNamespace(
        base_offset=offset,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        last_sequence=seq,
        records=[SimpleNamespace(key=None, value=value)],
    )


LOG = {
    b.base_offset: b
    for b in [
        _batch(0, -1, value="x"),
        _batch(1, -1, value="x"),  # the retry of offset 0: the one true duplicate
        _batch(2, -1, value="y"),
        _batch(3, 7, 0, 0, "a"),
        _batch(4, 7, 1, 0, "t"),  # after an epoch bump
        _batch(5, 8, 0, 0, "a"),  # a restarted application resends "a"
        _batch(6, 7, 0, 1, "t"),
    ]
}


@pytest.mark.parametrize(
    ("group", "says"),
    [
        ({0, 1}, ""),
        ({0, 2}, "records differ"),
        ({0, 3}, "mixes batches without a producer id"),
        ({3, 5}, "a NEW id"),
        ({3, 4}, "epoch bump"),
        ({3, 6}, "different sequence numbers"),
        ({0, 99}, "not batches of this log"),
    ],
)
def test_a_wrong_group_is_explained(group, says):
    why = cases.what_it_mixes(frozenset(group), LOG)
    assert (says in why) if says else why == ""


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

    from eoslab.demos.idempotent import Delivery, duplicate_sentence

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
