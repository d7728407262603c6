"""Lab 06 both ways, on the session's shared bench runs (``bench_runs``, root conftest.py: measured once,
shared with notebook 06): the solution passes every graded cell; the untouched lab fails at each.
(Plausible wrong answers: tests/integration/wrong_answers/lab06.py, run by test_wrong_answers.py.)"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from eoslab.grading import grade_notebook, graded_cells

ROOT = Path(__file__).resolve().parents[2]
NAME = "lab06_cost.ipynb"


def test_solution_scores_full_marks(bench_runs: Path, tmp_path: Path) -> None:
    nb = tmp_path / NAME
    shutil.copy(ROOT / "solutions" / NAME, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", True) for i in range(1, 5)], report.table()
    assert report.score == report.max_score == 4
    assert report.other_errors == []


def test_the_untouched_lab_fails_at_every_graded_cell(bench_runs: Path, tmp_path: Path) -> None:
    nb = tmp_path / NAME
    shutil.copy(ROOT / "labs" / NAME, nb)
    report = grade_notebook(nb, cell_timeout=120)
    tasks = {c["task"] for c in graded_cells(json.loads(nb.read_text()))}
    assert {t.task for t in report.tasks} == tasks
    assert all(not t.passed for t in report.tasks), report.table()
    # every answer is still the lab's TODO: each check says so at once, before its experiment (_unstarted)
    assert all(re.search(r"still (None, as the lab left it|the lab's TODO stub)", t.message) for t in report.tasks), (
        report.table()
    )
