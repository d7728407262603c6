"""Lab 03's checks whose scenarios are drawn at random must catch each plausible wrong answer in EVERY run (as
tests/unit/test_grading_decoys.py says): task 6's predicted __transaction_state records and task 1's coordinator of
a key, over many seeds, with no cluster."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from eoslab import inspect as ins
from eoslab.m03_transactions import _lab_setup as _lab03

ROOT = Path(__file__).resolve().parents[3]

SEEDS = range(200)


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
