"""Lab 06 task 4's failure never shows the p50 it recomputed (no cluster, no JVM).

The learner's runs do not change between attempts, so a figure printed on failure is the answer to type
in. The check's judging (what it does with the learner's function's result) is run here on held-out runs
(pandas only) with a result that is right for every commit interval but one."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from eoslab.grading import lab06
from eoslab.grading._heldout import heldout
from eoslab.labcheck import CheckFailed
from eoslab.runs import read_table


@pytest.fixture(scope="module")
def runs() -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    root, _ = heldout(7)
    try:
        yield read_table("samples", root), read_table("params", root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _p50s(samples: pd.DataFrame, params: pd.DataFrame) -> dict[float, float]:
    """The figures the check recomputes, by the same rule, from the raw rows: each run's p50, the median over runs."""
    p = params[params.transactional & params.commit_ms.notna()][["run", "workload", "commit_ms"]]
    s = samples[samples.kind == "e2e_read_committed"].merge(p, on=["run", "workload"])
    per_run = s.groupby(["commit_ms", "run"]).latency_ms.apply(lambda v: float(np.percentile(v, 50)))
    return {float(k): float(v) for k, v in per_run.groupby(level="commit_ms").median().items()}


def _judged(answer: dict[float, float], runs: tuple[pd.DataFrame, pd.DataFrame]) -> str | None:
    frame = pd.DataFrame({"commit_ms": list(answer), "p50": list(answer.values())})
    try:
        lab06._judge_e2e(frame, lab06.e2e_answers(*runs), "your runs")
    except lab06._Wrong as w:
        return f"t4: saw {w.saw}; expected {w.expected}. Hint: {w.hint}"
    return None


def test_the_right_p50s_pass(runs: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    assert _judged(_p50s(*runs), runs) is None


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_wrong_p50_fails_without_showing_the_right_one(
    runs: tuple[pd.DataFrame, pd.DataFrame], factor: float
) -> None:
    want = _p50s(*runs)
    k = sorted(want)[1]
    answer = {**want, k: want[k] * factor}
    message = _judged(answer, runs)
    assert message is not None
    assert f"{answer[k]:.4g}" in message and repr(k) in message
    assert "the p50 of the raw rows" in message and "Hint: join samples to params" in message
    for w in want.values():  # neither the figure of the wrong interval nor any other, at any precision shown
        for shown in (f"{w:.4g}", f"{w:.3g}", f"{w:.2f}", f"{w:.1f}"):
            assert not re.search(rf"(?<![\d.]){re.escape(shown)}(?![\d])", message), (shown, message)


def test_a_value_for_the_function_is_refused_before_any_runs_are_read() -> None:
    """t4 asks for the function now: its result passed instead is told so (the old form of the task)."""
    with pytest.raises(CheckFailed) as failed:
        lab06.check_e2e_by_commit(pd.DataFrame({"commit_ms": [20.0], "p50": [1.0]}), "/nonexistent/runs")
    message = str(failed.value)
    assert message.startswith("t4: ") and "the function e2e_by_commit" in message and "not its result" in message
