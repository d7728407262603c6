"""Lab 05 both ways: the solution passes every graded cell; the untouched lab fails at each and nowhere else.
(Plausible wrong answers: tests/integration/wrong_answers/lab05.py, run by test_wrong_answers.py.)"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eoslab.grading.lab05 import HINT_TRANSACTIONAL_ID
from eoslab.labcheck import grade_notebook

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.cluster, pytest.mark.destructive]
NAME = "lab05_exactly_once_pipeline.ipynb"


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
    assert report.other_errors == []  # the TODO cell never raises
    # The answer cell is examples/eos_loop.py's shape with TODOs; it runs, and every task fails on the first TODO
    # a processor meets: a producer without a transactional.id, refused by init_transactions.
    want = {"t1": HINT_TRANSACTIONAL_ID, "t2": HINT_TRANSACTIONAL_ID, "t3": HINT_TRANSACTIONAL_ID}
    for t in report.tasks:
        assert t.message and "Traceback" not in t.message
        assert want[t.task] in t.message, t.message
