"""The grades in the shapes the instructors' tools read, each read back by a reader that follows the tool's
published source (tests/formats.py): Canvas's gradebook import (one row per learner, a column per lab, the
total), a feedback file per learner with each task's message from the rerun, and GitHub Classroom's
autograding results (a runner per lab, a test per task with its points)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from _classroom import FakeNbval, instructor_course, make_course, no_jvm, quiet

from eoslab.classroom import _rerun, classroom_outputs, grade_class, write_submission
from eoslab.classroom._exports import FEEDBACK, LMS_CSV, feedback_name
from tests.formats import read_canvas_gradebook, read_classroom_outputs


@pytest.fixture(autouse=True)
def _no_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    no_jvm(monkeypatch)


@pytest.fixture
def graded_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Ana solves labs 01 and 04, Bo gets lab 01 wrong and hands in nothing else, "Cy Ö" solves lab 04 only; an
    unreadable archive lies beside them. The course has labs 01, 04 and 06 (2 points each)."""
    monkeypatch.setattr(_rerun, "grade_notebook", FakeNbval())
    instructor = instructor_course(tmp_path / "instructor")
    klass = tmp_path / "class"
    klass.mkdir()
    for learner, labs in (
        ("ana", {"lab01_a.ipynb": 42, "lab04_b.ipynb": 42}),
        ("bo", {"lab01_a.ipynb": 7}),
        ("Cy Ö", {"lab04_b.ipynb": 42}),
    ):
        write_submission(make_course(tmp_path / learner, labs), learner=learner, dest=klass)
    (klass / "notes.zip").write_bytes(b"not an archive")
    book = grade_class(klass, course=instructor, workers=0, progress=quiet)
    assert book.exports == [klass / LMS_CSV, klass / FEEDBACK]
    assert "notes.zip: not in grades-lms.csv nor feedback/" in book.text
    return klass


def test_the_lms_csv_is_one_row_per_learner_a_column_per_lab_and_a_total_as_canvas_imports_it(
    graded_class: Path,
) -> None:
    canvas = read_canvas_gradebook(graded_class / LMS_CSV)
    assert canvas.assignments == ["lab01_a", "lab04_b"]  # the labs handed in; lab 06 nobody did
    assert canvas.points_possible == {"lab01_a": "2", "lab04_b": "2"}
    assert canvas.stripped == ["Final Points"]  # the total: read by a person, left alone by the importer
    assert canvas.students == {
        "ana": {"lab01_a": "2", "lab04_b": "2"},
        "bo": {"lab01_a": "0", "lab04_b": "0"},  # lab 04 not handed in: 0, not "no grade"
        "Cy Ö": {"lab01_a": "0", "lab04_b": "2"},
    }
    rows = (graded_class / LMS_CSV).read_text(encoding="utf-8").splitlines()
    assert [r.rsplit(",", 1)[1] for r in rows] == ["Final Points", "4", "4", "0", "2"]


def test_each_learner_gets_a_feedback_file_with_every_tasks_message_from_the_rerun(graded_class: Path) -> None:
    folder = graded_class / FEEDBACK
    index = json.loads((folder / "index.json").read_text())
    assert index == {name: feedback_name(name) for name in ("Cy Ö", "ana", "bo")}
    assert len(set(index.values())) == 3 and all((folder / f).is_file() for f in index.values())
    bo = (folder / index["bo"]).read_text(encoding="utf-8")
    assert bo.startswith("# Lab feedback for bo\n") and "instructor's own rerun" in bo
    assert "**Total: 0 / 4 points.**" in bo
    assert "## lab01_a: 0 / 2 points" in bo
    assert "| t1 | the answer | 0 / 2 | wrong |" in bo  # the check's own message
    assert "Not handed in (0 points): lab04_b." in bo
    ana = (folder / index["ana"]).read_text(encoding="utf-8")
    assert "**Total: 4 / 4 points.**" in ana and ana.count("| t1 | the answer | 2 / 2 | right |") == 2
    assert "wrong" not in ana and "Cy" not in ana and "Not handed in" not in ana  # nobody else's results


def _lab(folder: Path, name: str, tasks: list[tuple[str, float]]) -> Path:
    """A lab notebook with one graded cell per (task, points)."""
    cells: list[dict[str, Any]] = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {"eoslab": {"grade": {"task": task, "points": points, "title": f"title {task}"}}},
            "source": "",
            "outputs": [],
            "execution_count": None,
        }
        for i, (task, points) in enumerate(tasks)
    ]
    path = folder / name
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def _report(nb: Path, points: dict[str, tuple[float, float]], sha: str | None = None) -> None:
    tasks: list[dict[str, Any]] = [
        {"task": t, "title": f"title {t}", "points": p, "max_points": m, "passed": p == m, "message": f"{t} said"}
        for t, (p, m) in points.items()
    ]
    data = {
        "notebook": nb.name,
        "sha256": sha or hashlib.sha256(nb.read_bytes()).hexdigest(),
        "score": sum(p for p, _ in points.values()),
        "max_score": sum(m for _, m in points.values()),
        "tasks": tasks,
    }
    nb.with_suffix(".report.json").write_text(json.dumps(data))


def test_github_classroom_gets_each_lab_as_a_runner_and_each_task_with_its_points(tmp_path: Path) -> None:
    labs = tmp_path / "labs"
    labs.mkdir()
    one = _lab(labs, "lab01_idempotence.ipynb", [("t1", 2), ("t2", 3), ("t3", 1)])
    _report(one, {"t1": (2, 2), "t2": (0, 3), "t3": (1, 1)})  # partial: 3 of 6
    _lab(labs, "lab02_pid_ranges.ipynb", [("t1", 4)])  # as the template gave it: not graded in this run
    three = _lab(labs, "lab03_transactions.ipynb", [("t1", 5)])
    _report(three, {"t1": (5, 5)}, sha="0" * 64)  # a report of another notebook (committed, or copied)

    outputs = classroom_outputs(labs)

    report = read_classroom_outputs(outputs, "lab01,lab02,lab03")
    assert report.dashboard == "Points 3/15" and report.fails_job
    lab01 = report.results["lab01"]
    assert (lab01["status"], lab01["max_score"]) == ("fail", 6)
    assert [(t["name"], t["status"], t["score"]) for t in lab01["tests"]] == [
        ("lab01 t1: title t1", "pass", 2),
        ("lab01 t2: title t2", "fail", 0),
        ("lab01 t3: title t3", "pass", 1),
    ]
    assert lab01["tests"][1]["message"] == "t2 said"
    lab02, lab03 = report.results["lab02"], report.results["lab03"]
    assert (lab02["max_score"], [t["score"] for t in lab02["tests"]]) == (4, [0])
    assert "as the template gave it" in lab02["tests"][0]["message"]
    assert (lab03["max_score"], lab03["tests"][0]["score"]) == (5, 0)
    assert "not the report of this notebook" in lab03["tests"][0]["message"]


def test_a_lab_at_full_marks_passes_the_reporter(tmp_path: Path) -> None:
    labs = tmp_path / "labs"
    labs.mkdir()
    one = _lab(labs, "lab01_idempotence.ipynb", [("t1", 2), ("t2", 3)])
    _report(one, {"t1": (2, 2), "t2": (3, 3)})
    report = read_classroom_outputs(classroom_outputs(labs), "lab01")
    assert (report.dashboard, report.fails_job, report.results["lab01"]["status"]) == ("Points 5/5", False, "pass")
