"""Lab 01 both ways: the solution passes every graded cell; the untouched lab fails at each and nowhere else;
plausible wrong answers fail their checks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eoslab.grading import CheckFailed, grade_notebook, lab01

ROOT = Path(__file__).resolve().parents[2]
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
    for t in report.tasks:
        assert t.message and "Traceback" not in t.message


def test_idempotence_off_fails_task_1(healed):
    with pytest.raises(CheckFailed, match=r"t1: saw 2 batch\(es\) on disk"):
        lab01.check_survives_ack_loss(healed, {"enable.idempotence": False})


def test_find_duplicates_by_offset_fails_task_2(healed):
    def by_offset(batches):
        seen: dict[int, list[int]] = {}
        for b in batches:
            seen.setdefault(b.base_offset, []).append(b.base_offset)
        return [g for g in seen.values() if len(g) > 1]

    with pytest.raises(CheckFailed, match=r"t2: saw \[\]; expected \[\[\d+, \d+\]\]"):
        lab01.check_find_duplicates(healed, by_offset)


def test_find_duplicates_by_content_only_fails_task_2_with_the_restart_hint(healed):
    def by_content(batches):
        seen: dict[tuple, list[int]] = {}
        for b in batches:
            seen.setdefault(tuple(r.value for r in b.records), []).append(b.base_offset)
        return [g for g in seen.values() if len(g) > 1]

    with pytest.raises(CheckFailed, match="a restarted producer gets a NEW id"):
        lab01.check_find_duplicates(healed, by_content)
