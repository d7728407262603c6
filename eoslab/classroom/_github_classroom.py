"""The learner's workflow reports its points to GitHub Classroom: one autograding "runner" per lab.

GitHub Classroom's dashboard shows the points its reporter action
(``classroom-resources/autograding-grading-reporter``) writes into the check run of the job
``run-autograding-tests``: ``Points <total>/<max>``, where max is the sum of each runner's ``max_score``
and total the sum of every test's ``score`` (its ``src/notify-classroom.js``). The reporter reads runner
``r``'s results from the environment variable ``R_RESULTS`` (``r`` upper-cased): base64 of a JSON
object, the shape the Classroom's own graders write (``autograding-command-grader``'s ``src/main.js``)::

    {"version": 1, "status": "pass" | "fail" | "error", "max_score": <points>,
     "tests": [{"name", "status", "score", "message", "test_code", "filename", "line_no", "duration"}]}

Here each lab is a runner (``lab01`` ... ``lab06``) and each of its graded tasks a test carrying that
task's points and the check's message, so the dashboard shows the points per task, not pass/fail at full
marks. A lab this run did not grade (unchanged from the template), or whose report does not belong to the
notebook beside it, is reported with every task at 0 and says why. The reporter fails the job when a
runner's ``status`` is ``fail``: a lab below full marks, as the workflow's own grading step does.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from eoslab.classroom._exports import lab_key
from eoslab.classroom._gradebook import read_report
from eoslab.errors import GradingError
from eoslab.labcheck import graded_cells

RESULTS_VERSION = 1
"""The ``version`` of the results format the Classroom's graders write."""

NOT_GRADED = "not graded in this run: {why}; push your work on this lab to have it graded."


def _test(task: dict[str, Any], notebook: str, status: str | None = None) -> dict[str, Any]:
    passed = bool(task.get("passed")) and float(task["points"]) >= float(task["max_points"])
    title = f"{task['task']}: {task.get('title', '')}".rstrip(": ")
    return {
        "name": f"{lab_key(notebook) or notebook} {title}",
        "status": status or ("pass" if passed else "fail"),
        "score": float(task["points"]),
        "message": str(task.get("message", "")),
        "test_code": "",
        "filename": f"labs/{notebook}",
        "line_no": 0,
        "duration": 0,
    }


def result_of_report(report: dict[str, Any]) -> dict[str, Any]:
    """One lab's results from the report ``eoslab grade`` wrote: a test per task, with its points."""
    notebook = str(report["notebook"])
    tests = [_test(t, notebook) for t in report.get("tasks") or []]
    status = "pass" if tests and all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": RESULTS_VERSION, "status": status, "max_score": float(report["max_score"]), "tests": tests}


def result_not_graded(notebook: Path, why: str) -> dict[str, Any]:
    """A lab not graded in this run: each of its graded tasks at 0 points, the lab's points as its maximum."""
    cells = graded_cells(json.loads(notebook.read_text()))
    message = NOT_GRADED.format(why=why)
    tests = [
        _test(
            {"task": c["task"], "title": c.get("title", ""), "points": 0.0, "max_points": 1.0, "message": message},
            notebook.name,
            "fail",
        )
        for c in cells
    ]
    top = sum(float(c.get("points", 1)) for c in cells)
    return {"version": RESULTS_VERSION, "status": "fail", "max_score": top, "tests": tests}


def lab_result(notebook: Path) -> dict[str, Any]:
    """The results of the lab ``notebook``: from its report when that report is of this very notebook."""
    report = notebook.with_suffix(".report.json")
    if not report.is_file():
        return result_not_graded(notebook, "the lab is as the template gave it")
    try:
        data = read_report(report)
    except GradingError:
        return result_not_graded(notebook, f"{report.name} is not a report eoslab wrote")
    if data.get("sha256") != hashlib.sha256(notebook.read_bytes()).hexdigest():
        return result_not_graded(notebook, f"{report.name} is not the report of this notebook")
    return result_of_report(data)


def classroom_outputs(labs: Path) -> dict[str, str]:
    """Runner id (``lab01``) -> its results, base64-encoded as the reporter reads them, for every lab in ``labs``."""
    notebooks = sorted(p for p in labs.glob("lab*.ipynb") if lab_key(p.name))
    if not notebooks:
        raise GradingError(f"{labs} holds no lab notebook: give the labs folder, e.g. labs.")
    return {lab_key(nb.name): base64.b64encode(json.dumps(lab_result(nb)).encode()).decode("ascii") for nb in notebooks}
