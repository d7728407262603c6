"""Lab 06's solution, on the session's shared bench runs (``bench_runs``, root conftest.py: measured once,
shared with notebook 06), passes every graded cell through ``grade_notebook``. The untouched lab, and the
plausible wrong answers (tests/integration/wrong_answers/lab06.py), are judged in test_wrong_answers.py, in the
one kernel state lab 06's rows share (a second Spark kernel here cost 18-35 s to see four refusals)."""

from __future__ import annotations

import shutil
from pathlib import Path

from eoslab.labcheck import grade_notebook

ROOT = Path(__file__).resolve().parents[2]
NAME = "lab06_cost.ipynb"


def test_solution_scores_full_marks(bench_runs: Path, tmp_path: Path) -> None:
    nb = tmp_path / NAME
    shutil.copy(ROOT / "solutions" / NAME, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", True) for i in range(1, 5)], report.table()
    assert report.score == report.max_score == 4
    assert report.other_errors == []
