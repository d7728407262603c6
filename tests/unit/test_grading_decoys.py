"""Graded checks whose scenarios are drawn at random must catch each plausible wrong answer in EVERY run.

A wrong answer that passes one run in five makes the wrong-answer tests fail by chance (and hands a learner
a point by luck). Each test here draws many seeds of a check's scenario, with no cluster, and asserts that
every named wrong rule disagrees with the right one somewhere in every draw.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eoslab import inspect as ins
from eoslab.demos import read_committed as rc
from eoslab.grading import _lab03, _lab04

ROOT = Path(__file__).resolve().parents[2]

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


# -- lab 03 task 6: predict __transaction_state --------------------------------------------------------------


def _solution_predict() -> Callable[[list[str]], list[tuple[str, int]]]:
    """The solution's ``predict`` (lab 03 task 6), from the solution notebook itself."""
    nb = json.loads((ROOT / "solutions" / "lab03_transactions.ipynb").read_text())
    (src,) = ["".join(c["source"]) for c in nb["cells"] if "def predict(steps)" in "".join(c["source"])]
    ns: dict[str, Any] = {}
    exec(src, ns)
    return ns["predict"]


def _model(steps: list[str], wrong: str = "") -> list[tuple[str, int]]:
    """The coordinator's records for ``steps`` as the course teaches them; ``wrong`` names one rule changed."""
    out: list[tuple[str, int]] = []
    epoch, ongoing, enrolled = 0, False, set[str]()
    for n, step in enumerate(steps):
        if step == "init" and n and ongoing and wrong != "a fence just bumps the epoch":
            out += [("PrepareAbort", epoch + 1), ("CompleteAbort", epoch + 1)]
            epoch += 2
        elif step == "init" and n:
            epoch += 1
        if step == "init":
            out.append(("Empty", epoch))
            ongoing, enrolled = False, set()
        elif step in ("send A", "send B", "offsets"):
            new = step not in enrolled or wrong == "a record per send"
            if new and not (step == "offsets" and wrong == "offsets enrol nothing"):
                out.append(("Ongoing", epoch))
                ongoing = True
            enrolled.add(step)
        elif step in ("commit", "abort"):
            end = "Commit" if step == "commit" or wrong == "always Commit" else "Abort"
            if enrolled or wrong == "an empty transaction ends with records":
                out += [(f"Prepare{end}", epoch), (f"Complete{end}", epoch)]
            ongoing, enrolled = False, set()
        elif step == "timeout" and wrong != "a timeout writes nothing":
            epoch += 0 if wrong == "a timeout keeps the epoch" else 1
            out += [("PrepareAbort", epoch), ("CompleteAbort", epoch)]
    return out


T6_WRONG = (
    "a fence just bumps the epoch",
    "a record per send",
    "offsets enrol nothing",
    "always Commit",
    "an empty transaction ends with records",
    "a timeout writes nothing",
    "a timeout keeps the epoch",
)


@pytest.mark.parametrize("seed", SEEDS)
def test_lab03_every_wrong_state_rule_misses_a_drawn_scenario(seed: int) -> None:
    plans = _lab03.scenarios(random.Random(seed))
    right = _solution_predict()
    assert [_model(p) for p in plans] == [right(list(p)) for p in plans]  # the model is the solution's
    for wrong in T6_WRONG:
        assert any(_model(p, wrong) != _model(p) for p in plans), (wrong, plans)


# -- lab 03 task 1: which broker coordinates a key ------------------------------------------------------------


def _leaders(rng: random.Random) -> dict[str, dict[int, int]]:
    """Leaders of the 50 partitions of each internal topic: balanced, or skewed onto two brokers (a restart)."""
    brokers = rng.choice([[1, 2, 3], [1, 2], [2, 3, 3, 3]])
    return {t: {p: rng.choice(brokers) for p in range(50)} for t in _lab03.INTERNAL.values()}


def _java_partition(key: str, rule: Callable[[int], int] | None = None) -> int:
    h = ins.java_string_hash(key)
    return rule(h) if rule is not None else ins.kafka_abs(h) % 50


@pytest.mark.parametrize("seed", SEEDS)
def test_lab03_every_sign_mistake_names_another_broker_for_some_key(seed: int) -> None:
    rng = random.Random(seed)
    table = _leaders(rng)
    keys, minimal = _lab03.coordinator_keys(f"s{seed}", table)
    assert len(keys) == 2 * _lab03.KEYS_PER_KIND + 4 and len(minimal) == 2
    for name, rule in _lab03.WRONG_SIGN_RULES.items():
        for kind, topic in _lab03.INTERNAL.items():
            mine = [k for k, kd in keys if kd == kind]
            assert any(table[topic][_java_partition(k, rule)] != table[topic][_java_partition(k)] for k in mine), (
                name,
                kind,
            )


def test_lab03_no_sign_key_when_one_broker_leads_everything() -> None:
    assert _lab03.negative_key("x-", dict.fromkeys(range(50), 1), random.Random(0)) is None
