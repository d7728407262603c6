"""Lab 06 task 4's failure never shows the p50 it recomputed (no cluster, no JVM).

The learner's runs do not change between attempts, so a figure printed on failure is the answer to type
in. The check is run here on held-out runs (pandas only) with an answer that is right for every commit
interval but one."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from eoslab.grading import CheckFailed, lab06
from eoslab.grading._heldout import heldout
from eoslab.runs import read_table


@pytest.fixture(scope="module")
def runs() -> Iterator[Path]:
    root, _ = heldout(7)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _p50s(root: Path) -> dict[float, float]:
    """The figures the check recomputes, by the same rule, from the raw rows."""
    s, p = read_table("samples", root), read_table("params", root)
    p = p[p.transactional & p.commit_ms.notna()][["run", "workload", "commit_ms"]]
    s = s[s.kind == "e2e_read_committed"].merge(p, on=["run", "workload"])
    return {float(k): float(np.percentile(g["latency_ms"], 50)) for k, g in s.groupby("commit_ms")}


def test_the_right_p50s_pass(runs: Path) -> None:
    assert lab06.check_e2e_by_commit(_p50s(runs), runs).passed


@pytest.mark.parametrize("factor", [0.5, 2.0])
def test_a_wrong_p50_fails_without_showing_the_right_one(runs: Path, factor: float) -> None:
    want = _p50s(runs)
    k = sorted(want)[1]
    answer = {**want, k: want[k] * factor}
    with pytest.raises(CheckFailed) as failed:
        lab06.check_e2e_by_commit(answer, runs)
    message = str(failed.value)
    assert message.startswith("t4: ") and f"{answer[k]:.4g}" in message and repr(k) in message
    assert "not the p50 of the raw samples" in message and "Hint: join samples to params" in message
    for w in want.values():  # neither the figure of the wrong interval nor any other, at any precision shown
        for shown in (f"{w:.4g}", f"{w:.3g}", f"{w:.2f}", f"{w:.1f}"):
            assert not re.search(rf"(?<![\d.]){re.escape(shown)}(?![\d])", message), (shown, message)
