"""Lab 06's hint names the learner's own wrong decision, never another that gives the same figures on their runs.

The learner's runs are what their laptop measured: on a loaded one, two wrong decisions can give the same
figures there (run 91: an answer that kept every kind of sample failed with the read_uncommitted hint). The
check then names the decision by the answer's figures on the held-out runs, where no two decisions coincide
(:func:`eoslab.grading._lab06_figures.confusable`). Here the judging of :mod:`eoslab.grading.lab06` runs on
figures made up for the purpose (no Spark, no runs): "yours" has two decisions giving the same p50,
"held-out" tells them apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eoslab.grading import _heldout, lab06
from eoslab.grading._lab06_figures import RIGHT
from eoslab.labcheck import CheckFailed

ALL_KINDS = "every kind of sample is in"
UNCOMMITTED = "the read_uncommitted samples are taken"
GENERIC = "keep kind 'e2e_read_committed'"

YOURS = {RIGHT: {20.0: 40.0, 100.0: 120.0}, UNCOMMITTED: {20.0: 5.0, 100.0: 6.0}, ALL_KINDS: {20.0: 5.0, 100.0: 6.0}}
HELD_OUT = {
    RIGHT: {20.0: 41.0, 100.0: 119.0},
    UNCOMMITTED: {20.0: 4.0, 100.0: 4.5},
    ALL_KINDS: {20.0: 9.0, 100.0: 10.0},
}


def _check(decision: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[str | None, list[str]]:
    """Lab 06's judging of a function that computes ``decision``'s figures (RIGHT: the right ones; None: figures
    no decision gives):
    the failure's message (None: passed) and the runs judged, in order."""
    monkeypatch.setattr(_heldout, "heldout", lambda: (tmp_path / "held-out", 7))
    monkeypatch.setattr(_heldout, "load", lambda root: "held-out")
    judged: list[str] = []

    def judge_one(base: Path, loaded: Any, where: str) -> None:
        figures = HELD_OUT if loaded == "held-out" else YOURS
        judged.append(where)
        got = {k: v * 3 for k, v in figures[RIGHT].items()} if decision is None else figures[decision]
        lab06._judge(got, figures, where, "p50", GENERIC + ".", show=False)

    try:
        lab06._run_both("t4", tmp_path, judge_one, "ok")
    except CheckFailed as failed:
        return str(failed), judged
    return None, judged


@pytest.mark.parametrize("decision", [ALL_KINDS, UNCOMMITTED])
def test_two_decisions_giving_the_same_figures_on_your_runs_are_told_apart_on_the_held_out_runs(
    decision: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    message, judged = _check(decision, monkeypatch, tmp_path)
    assert judged == ["your runs", "the held-out runs (seed 7)"]
    assert message is not None and f"Hint: {decision}." in message
    other = UNCOMMITTED if decision == ALL_KINDS else ALL_KINDS
    assert other not in message and "in the held-out runs (seed 7)" in message


def test_a_decision_alone_in_giving_the_figures_is_named_on_your_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(YOURS, ALL_KINDS, {20.0: 8.0, 100.0: 9.0})
    message, judged = _check(UNCOMMITTED, monkeypatch, tmp_path)
    assert judged == ["your runs"]  # the held-out runs are not needed to name it
    assert message is not None and f"Hint: {UNCOMMITTED}." in message and "in your runs" in message


def test_figures_no_decision_gives_fail_with_the_tasks_hint_on_your_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    message, judged = _check(None, monkeypatch, tmp_path)
    assert judged == ["your runs"]
    assert message is not None and f"Hint: {GENERIC}." in message and "in your runs" in message
    assert ALL_KINDS not in message and UNCOMMITTED not in message


def test_the_right_figures_pass_on_both(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    message, judged = _check(RIGHT, monkeypatch, tmp_path)
    assert message is None and judged == ["your runs", "the held-out runs (seed 7)"]
