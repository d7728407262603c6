"""Lab 02 both ways, and a plausible wrong answer (blocks assumed global, not per broker)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eoslab.grading import CheckFailed, grade_notebook, lab02

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.cluster, pytest.mark.destructive]


def test_solution_scores_full_marks(healed, tmp_path):
    nb = tmp_path / "lab02_pid_ranges.ipynb"
    shutil.copy(ROOT / "solutions" / nb.name, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", True) for i in range(1, 5)], report.table()
    assert report.score == report.max_score == 7 and report.other_errors == []


def test_untouched_lab_fails_at_every_graded_cell_and_nowhere_else(healed, tmp_path):
    nb = tmp_path / "lab02_pid_ranges.ipynb"
    shutil.copy(ROOT / "labs" / nb.name, nb)
    report = grade_notebook(nb)
    assert [(t.task, t.passed) for t in report.tasks] == [(f"t{i}", False) for i in range(1, 5)], report.table()
    assert report.other_errors == []


def test_blocks_assumed_global_fail_task_3(healed):
    def newest_overall(blocks, broker):
        b = max(blocks, key=lambda b: b.next_producer_id)
        return (b.first_producer_id, b.next_producer_id)

    # Make sure the newest block overall is NOT broker 2's: give broker 3 a fresh one.
    from eoslab.demos.pid_ranges import PidClient, current_block

    with PidClient(healed, client_id="lab02-wrong") as pc:
        pc.init(2)
        pc.burn(3, 1000 - (pc.init(3).producer_id - current_block(healed, 3).first_producer_id) + 5)
    with pytest.raises(CheckFailed, match="t3: saw broker 2 answered .* outside your"):
        lab02.check_predict_block(healed, newest_overall)
