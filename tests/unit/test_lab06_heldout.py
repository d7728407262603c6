"""Lab 06's held-out runs separate every known wrong decision from the right one, whatever the seed
(pandas only: no JVM). Each wrong decision here has a row in tests/integration/wrong_answers/lab06.py."""

from __future__ import annotations

import shutil

import pytest

from eoslab.grading import lab06
from eoslab.grading._heldout import heldout
from eoslab.grading._lab06_figures import close
from eoslab.runs import read_table


def _span(v: float | tuple[float, float]) -> tuple[float, float]:
    lo, hi = v if isinstance(v, tuple) else (v, v)
    return lo - max(lab06.PCT_ABS_TOL_MS, lab06.PCT_REL_TOL * abs(lo)), hi + max(
        lab06.PCT_ABS_TOL_MS, lab06.PCT_REL_TOL * abs(hi)
    )


def _apart(right: dict, alt: dict) -> bool:
    """Some key's wrong answer cannot be taken for the right one: their accepted ranges do not overlap."""
    for k, r in right.items():
        if k not in alt:
            continue
        if isinstance(r, tuple):
            (alo, ahi), (rlo, rhi) = _span(alt[k]), _span(r)
            if ahi < rlo or alo > rhi:
                return True
        elif not close(alt[k], r):
            return True
    return False


def test_apart_tells_a_copy_from_another_figure():
    assert not _apart({"a": 1.0}, {"a": 1.0}) and _apart({"a": 1.0}, {"a": 1.01})
    assert not _apart({"a": (10.0, 11.0)}, {"a": (10.5, 10.6)}) and _apart({"a": (10.0, 11.0)}, {"a": (15.0, 16.0)})


@pytest.mark.parametrize("seed", range(8))
def test_every_wrong_decision_gives_another_answer(seed):
    root, _ = heldout(seed)
    try:
        s, samples = read_table("summary", root), read_table("samples", root)
        for answers in (lab06.spread_answers(s), lab06.cost_answers(s), lab06.tail_answers(samples)):
            right = answers["right"]
            assert right
            for why, alt in answers.items():
                if why != "right":
                    assert _apart(right, alt), why
    finally:
        shutil.rmtree(root)


def test_held_out_runs_have_the_traps():
    root, seed = heldout(5)
    try:
        s, samples = read_table("summary", root), read_table("samples", root)
        assert seed == 5 and s.run.nunique() == 3
        rounds = s[s.client == "eoslab"].groupby("run")["round"].max() + 1
        assert sorted(rounds) == [3, 5, 8]  # runs of unequal length
        assert {"java"} <= set(s.client) and (s[s.client == "java"]["round"] == -1).all()
        assert s[s["round"] >= 0].seconds.nunique() > 1  # slices of uneven length: records is not a rate
        assert sorted(samples[samples.kind == "ack"].groupby("run").size() // 6) == [250, 400, 4000]
    finally:
        shutil.rmtree(root)
