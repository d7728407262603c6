"""Lab 01 both ways: the solution passes every graded cell; the untouched lab fails at each and nowhere else.
(Plausible wrong answers: tests/integration/wrong_answers/lab01.py, run by test_wrong_answers.py.)"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from eoslab.labcheck import grade_notebook

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.cluster, pytest.mark.destructive]


def test_solution_scores_full_marks(healed, tmp_path):
    nb = tmp_path / "lab01_idempotence.ipynb"
    shutil.copy(ROOT / "solutions" / nb.name, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", True) for i in range(1, 6)], report.table()
    assert report.score == report.max_score == 7
    assert report.other_errors == []


def test_untouched_lab_fails_at_every_graded_cell_and_nowhere_else(healed, tmp_path):
    nb = tmp_path / "lab01_idempotence.ipynb"
    shutil.copy(ROOT / "labs" / nb.name, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", False) for i in range(1, 6)], report.table()
    assert report.other_errors == []  # TODO cells never raise
    # every answer but t1's settings (an empty dict: the experiment judges it) is still the lab's TODO,
    # and each check says so at once, before its experiment (eoslab.labcheck._not_started)
    assert all(
        re.search(r"still (None, as the lab left it|the lab's TODO stub)", t.message)
        for t in report.tasks
        if t.task != "t1"
    ), report.table()
    for t in report.tasks:
        assert t.message and "Traceback" not in t.message
