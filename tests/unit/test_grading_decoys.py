"""Graded checks whose scenarios are drawn at random must catch each plausible wrong answer in EVERY run.

A wrong answer that passes one run in five makes the wrong-answer tests fail by chance (and hands a learner
a point by luck). Each test here draws many seeds of a check's scenario, with no cluster, and asserts that
every named wrong rule disagrees with the right one somewhere in every draw. Lab 03's: tests/unit/m03/.
"""

from __future__ import annotations

import random

import pytest

from eoslab.demos import read_committed as rc
from eoslab.grading import _lab04

SEEDS = range(200)


def _sends_and_fates(pattern: list[rc.Op]) -> list[tuple[str, str]]:
    """(actor, fate) of each transactional send, the fate being the actor's NEXT end (open: none yet)."""
    out: list[tuple[str, str]] = []
    pending: dict[str, list[int]] = {}
    for op in pattern:
        if op.actor == rc.PLAIN:
            continue
        if op.action == "send":
            pending.setdefault(op.actor, []).append(len(out))
            out.append((op.actor, "open"))
        else:
            for i in pending.pop(op.actor, []):
                out[i] = (op.actor, op.action)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_lab04_the_closed_partition_ends_each_actors_transactions_both_ways(seed: int) -> None:
    """Task 1: "a batch's fate is its producer's last marker" (a dict over the log) and "... its first marker"
    (setdefault) both misread a transaction of partition 2, whatever is drawn."""
    pattern = _lab04._patterns(random.Random(seed))[2]
    sends = _sends_and_fates(pattern)
    assert sends and all(fate != "open" for _, fate in sends)  # P2 has no open transaction
    ends = [(op.actor, op.action) for op in pattern if op.actor != rc.PLAIN and op.action != "send"]
    last = {actor: how for actor, how in ends}
    first: dict[str, str] = {}
    for actor, how in ends:
        first.setdefault(actor, how)
    for rule in (last, first):
        assert any(rule[actor] != fate for actor, fate in sends), (seed, pattern)
