"""Stretch tasks (issue 23, "a core path one day can hold"): a lab task whose grade says ``"stretch": true`` is
graded like any other but is optional in a one-day workshop, so `eoslab course time` counts it off the core path
and lists it apart with its minutes (its allowance and its own cells' run time); its heading says so to the
learner; the score report shows the core's and the stretch tasks' points apart."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from eoslab.course import course_time, time_table
from eoslab.course._reading import read_notebook, task_span
from eoslab.labcheck import Report, graded_cells, score

ROOT = Path(__file__).resolve().parents[2]
LABS = sorted((ROOT / "solutions").glob("lab*.ipynb")) + sorted((ROOT / "labs").glob("lab*.ipynb"))
SAYS_STRETCH = "a stretch task: optional in a one-day workshop, for after it"


def _md(cid: str, text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cid, "metadata": {}, "source": text}


def _code(cid: str, text: str, grade: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {"eoslab": {"grade": grade}} if grade else {}
    return {"cell_type": "code", "execution_count": None, "id": cid, "metadata": meta, "outputs": [], "source": text}


def _nb(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _lab() -> dict[str, Any]:
    """Setup, then three tasks; the second is a stretch task with a cell of its own besides its answer."""
    return _nb(
        _md("intro", "# Lab 01\n\nThree tasks."),
        _code("setup", "import os"),
        _md("h1", "## Task 1 — first (1 point)"),
        _code("a1", "a = 1"),
        _code("g1", "check(a)", {"task": "t1", "points": 1, "title": "first"}),
        _md("h2", f"## Task 2 — second (2 points; {SAYS_STRETCH})"),
        _code("show", "print('choices')"),
        _code("a2", "b = 2"),
        _code("g2", "check(b)", {"task": "t2", "points": 2, "title": "second", "stretch": True}),
        _md("h3", "## Task 3 — third (1 point)"),
        _code("a3", "c = 3"),
        _code("g3", "check(c)", {"task": "t3", "points": 1, "title": "third"}),
    )


def _course(root: Path) -> Path:
    (root / "notebooks").mkdir(parents=True)
    (root / "solutions").mkdir()
    module = _nb(_md("title", "# 01 · Beta"), _md("overview", "## Overview\n\none two three four five"))
    (root / "notebooks" / "01_beta.ipynb").write_text(json.dumps(module))
    (root / "solutions" / "lab01_beta.ipynb").write_text(json.dumps(_lab()))
    seconds = {"setup": 60.0, "a1": 6.0, "g1": 54.0, "show": 6.0, "a2": 6.0, "g2": 108.0, "a3": 6.0, "g3": 54.0}
    facts = {"cores": 2, "memory_gib": 24, "os": "Linux", "date": "2026-11-27"}
    times = {"solutions/lab01_beta.ipynb": {"cells": seconds, "total_s": sum(seconds.values()), "measured_on": facts}}
    (root / "times.json").write_text(json.dumps(times))
    return root / "times.json"


def test_a_stretch_task_is_off_the_core_path_and_listed_apart_with_its_minutes(tmp_path: Path) -> None:
    course = course_time(tmp_path, times_file=_course(tmp_path))
    (beta,) = course.modules
    assert beta.lab is not None
    # The core lab: tasks 1 and 3 at 10 min each, and the run of every cell but task 2's own (setup 1 min,
    # task 1 1 min, task 3 1 min).
    assert (beta.lab.tasks, beta.lab.task_min, beta.lab.code_cells) == (2, 20.0, 5)
    assert beta.lab.run_min == pytest.approx(3.0)
    (t2,) = beta.lab.stretch
    assert (t2.task, t2.title, t2.task_min, t2.code_cells, t2.not_measured) == ("t2", "second", 10.0, 3, 0)
    assert t2.run_min == pytest.approx(2.0) and t2.minutes == pytest.approx(12.0)
    assert beta.minutes == pytest.approx(beta.core.minutes + 23.0)
    assert course.core_path_min == pytest.approx(beta.core.minutes + 23.0)
    assert course.stretch_min == pytest.approx(12.0)
    assert course.to_json()["modules"][0]["lab"]["stretch"][0]["minutes"] == pytest.approx(12.0)
    assert course.to_json()["stretch_min"] == pytest.approx(12.0)
    table = time_table(course)
    assert "Stretch tasks, apart (graded, optional in a one-day workshop, not in the total):" in table
    row = next(line for line in table.splitlines() if "t2 second" in line)
    assert row.split() == ["01", "t2", "second", "10.0", "3", "2.0", "12.0"]
    assert "Stretch tasks in all: 12.0 min (0 h 12 min)." in table


def test_without_a_stretch_task_every_task_is_core(tmp_path: Path) -> None:
    times = _course(tmp_path)
    lab = _lab()
    del lab["cells"][8]["metadata"]["eoslab"]["grade"]["stretch"]
    (tmp_path / "solutions" / "lab01_beta.ipynb").write_text(json.dumps(lab))
    course = course_time(tmp_path, times_file=times)
    assert course.modules[0].lab is not None
    assert (course.modules[0].lab.tasks, course.modules[0].lab.stretch, course.stretch_min) == (3, (), 0)
    assert course.modules[0].lab.run_min == pytest.approx(5.0)
    assert "Stretch tasks" not in time_table(course)


def test_a_task_span_runs_from_its_heading_to_its_graded_cell() -> None:
    lab = _lab()
    assert task_span(lab, "g1") == ("## Task 1 — first (1 point)", ("a1", "g1"))
    heading, cells = task_span(lab, "g2")
    assert heading.startswith("## Task 2") and cells == ("show", "a2", "g2")
    headless = _nb(_code("setup", "x"), _code("g1", "check(x)", {"task": "t1"}), _code("g2", "y", {"task": "t2"}))
    assert task_span(headless, "g2") == ("", ("g2",))


@pytest.mark.parametrize("path", LABS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_stretch_task_says_so_in_its_heading_and_no_other_does(path: Path) -> None:
    nb = read_notebook(path)
    stretch = [g for g in graded_cells(nb) if g.get("stretch") is True]
    assert len(stretch) <= 1, f"{path.name}: one stretch task a lab at most, so a lab keeps its core"
    for g in graded_cells(nb):
        heading = task_span(nb, g["cell_id"])[0].split("\n", 1)[0]
        assert re.match(r"^## Task \d", heading), f"{path.name} {g['task']}: its graded cell has no '## Task' heading"
        says = SAYS_STRETCH in heading
        assert says == (g in stretch), f"{path.name} {g['task']}: its heading and its grade disagree on 'stretch'"


def test_the_course_marks_one_stretch_task_in_each_lab_but_labs_05_and_07() -> None:
    marked = {
        p.name[:5]: [g["task"] for g in graded_cells(read_notebook(p)) if g.get("stretch") is True]
        for p in sorted((ROOT / "solutions").glob("lab*.ipynb"))
    }
    assert marked == {
        "lab01": ["t3"],
        "lab02": ["t4"],
        "lab03": ["t1"],
        "lab04": ["t4"],
        "lab05": [],
        "lab06": ["t1"],
        "lab07": [],
    }


def test_the_score_report_shows_core_and_stretch_points_apart() -> None:
    lab = _lab()
    outcomes = [{"cell_id": c, "outcome": "passed", "timeout": False, "xfail": False} for c in ("g1", "g2", "g3")]
    verdicts = [{"task": t, "passed": t != "t3", "message": "ok"} for t in ("t1", "t2", "t3")]
    tasks, _ = score(lab, outcomes, verdicts)
    assert [(t.task, t.points, t.stretch) for t in tasks] == [("t1", 1.0, False), ("t2", 2.0, True), ("t3", 0.0, False)]
    report = Report("lab01.ipynb", "0" * 64, "0.1.0", "now", 1.0, tasks)
    lines = report.table().splitlines()
    assert lines[0] == "lab01.ipynb: 3 / 4 points (core 1 / 2, stretch 2 / 2)"
    assert "second (stretch)" in next(line for line in lines if line.startswith("t2"))
    assert report.to_json()["tasks"][1]["stretch"] is True
    plain = Report("lab.ipynb", "0" * 64, "0.1.0", "now", 1.0, [t for t in tasks if not t.stretch])
    assert plain.table().splitlines()[0] == "lab.ipynb: 1 / 2 points"
