"""Lab 07 both ways: the solution passes every graded cell; the untouched lab fails at each and nowhere else.
(Plausible wrong diagnoses and fixes: tests/integration/wrong_answers/lab07.py, run by test_wrong_answers.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eoslab.labcheck import grade_notebook

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.cluster, pytest.mark.destructive]
NAME = "lab07_diagnosis.ipynb"


def test_solution_scores_full_marks(healed, tmp_path):
    nb = tmp_path / NAME
    shutil.copy(ROOT / "solutions" / NAME, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", True) for i in range(1, 4)], report.table()
    assert report.score == report.max_score == 6
    assert report.other_errors == []


def test_untouched_lab_fails_at_every_graded_cell_and_nowhere_else(healed, tmp_path):
    nb = tmp_path / NAME
    shutil.copy(ROOT / "labs" / NAME, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", False) for i in range(1, 4)], report.table()
    assert report.other_errors == []  # the show and evidence cells say "write your name" and do nothing else
    for t in report.tasks:
        assert t.message and "Traceback" not in t.message
        assert "still None, as the lab left it" in t.message, t.message
