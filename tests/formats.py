"""The published formats the kit's grade outputs are read in, as the reading programs read them: each reader
below follows its source line by line (cited), so that a test fails when the kit writes something the other
tool would refuse or misread. Used by tests/unit/test_grade_exports.py and by the integration tests that
run the real class rerun and the learner's workflow."""

from __future__ import annotations

import base64
import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# -- Canvas: app/models/gradebook_importer.rb (instructure/canvas-lms) -----------------------------------------

CANVAS_NON_ASSIGNMENT = (
    "Current Score",
    "Current Points",
    "Current Grade",
    "Final Score",
    "Final Points",
    "Final Grade",
    "Override Score",
    "Override Grade",
    "Override Status",
)
"""``NON_ASSIGNMENT_COLUMN_HEADERS``: columns the importer strips (matched as a regexp alternation, anywhere)."""


@dataclass
class CanvasImport:
    """What Canvas's gradebook importer takes from a CSV: assignments, their points possible, each student's
    grades (matched by name when ``ID`` and the SIS columns are empty), and the columns it strips."""

    assignments: list[str]
    points_possible: dict[str, str]
    students: dict[str, dict[str, str]]
    stripped: list[str] = field(default_factory=list)


def _student_columns(header: list[str]) -> int:
    """``row_has_student_headers?``, ``update_column_count`` and the ``Section`` check of ``header?``."""
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], f"not a Canvas header row: {header}"
    count = 3
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        count += 1
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        count += 2 + (1 if re.search(r"Integration\s+ID", header[4]) else 0)
    assert "Section" in header[count - 1], f"Canvas wants the last student column to be Section: {header[:count]}"
    return count


def _canvas_number(cell: str) -> bool:
    """A grade the importer keeps as a score: a number (``decimal_comma_to_period``), blank, ``-`` or ``EX``."""
    return cell.strip() in ("", "-", "EX") or re.fullmatch(r"-?[0-9.,]+%?", cell.strip()) is not None


def read_canvas_gradebook(path: Path) -> CanvasImport:
    """Read ``path`` as Canvas's importer does (comma-delimited; the header row; a ``Points Possible`` row;
    student rows), asserting every rule it enforces."""
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert rows, f"{path} is empty"
    header, rest = rows[0], rows[1:]
    width = _student_columns(header)
    pattern = re.compile("|".join(CANVAS_NON_ASSIGNMENT))
    stripped = [h for h in header[width:] if pattern.search(h)]
    assignments = [h for h in header[width:] if not pattern.search(h)]
    at = {h: header.index(h) for h in assignments}
    out = CanvasImport(assignments, {}, {}, stripped)
    for row in rest:
        assert len(row) == len(header), f"a row of {len(row)} cells under a header of {len(header)}: {row}"
        if "Points Possible" in row[0]:
            out.points_possible = {a: row[i] for a, i in at.items()}
            continue
        assert row[0].strip(), f"a student row without a name, ID or SIS id: {row}"
        grades = {a: row[i] for a, i in at.items()}
        assert all(_canvas_number(g) for g in grades.values()), f"a grade Canvas reads as no score: {row}"
        assert row[0] not in out.students, f"{row[0]} twice: Canvas keeps one row per student"
        out.students[row[0]] = grades
    return out


# -- GitHub Classroom: classroom-resources/autograding-grading-reporter ----------------------------------------

RUNNERS = re.compile(r"^([a-zA-Z0-9]+,)*[a-zA-Z0-9]+$")
"""The reporter's check of its ``runners`` input (``src/main.js``)."""
STATUSES = ("pass", "fail", "error")
TEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "status": str,
    "score": (int, float),
    "message": str,
    "test_code": str,
    "filename": str,
    "line_no": int,
    "duration": (int, float),
}
"""A test's fields as the Classroom's graders write them (``autograding-command-grader`` ``src/main.js``
``generateResult``) and the reporter reads them (``src/console-results.js``, ``src/notify-classroom.js``)."""


@dataclass
class ClassroomReport:
    """What the reporter makes of the runners: each runner's results, the dashboard's ``Points total/max``, and
    whether it fails the job (``src/main.js``)."""

    results: dict[str, dict[str, Any]]
    total_points: float
    max_points: float
    fails_job: bool

    @property
    def dashboard(self) -> str:
        return f"Points {self.total_points:g}/{self.max_points:g}"


def _check_results(runner: str, results: Any) -> None:
    assert isinstance(results, dict), f"{runner}: results are not a JSON object"
    assert results.get("version") == 1, f"{runner}: version {results.get('version')!r}, the graders write 1"
    assert results.get("status") in STATUSES, f"{runner}: status {results.get('status')!r}"
    assert isinstance(results.get("max_score"), (int, float)), f"{runner}: max_score must be a number"
    tests = results.get("tests")
    assert isinstance(tests, list) and tests, f"{runner}: no tests (the reporter divides by their number)"
    for t in tests:
        for name, kind in TEST_FIELDS.items():
            assert isinstance(t.get(name), kind), f"{runner}: test {t.get('name')!r} field {name}={t.get(name)!r}"
        assert t["status"] in STATUSES, f"{runner}: test status {t['status']!r}"
        assert 0 <= t["score"], f"{runner}: a negative score"
    assert sum(t["score"] for t in tests) <= results["max_score"] + 1e-9, f"{runner}: more points than max_score"


def read_classroom_outputs(outputs: dict[str, str], runners: str, env: dict[str, str] | None = None) -> ClassroomReport:
    """The reporter's reading of its ``runners`` input: for each runner ``r``, ``R_RESULTS`` (upper-cased) is
    base64 of JSON (``src/main.js``). ``env`` maps those variable names to step outputs' names (the workflow's
    ``env:``); without it the outputs are named by the runners themselves."""
    assert RUNNERS.match(runners), f"runners {runners!r} fail the reporter's pattern"
    results = {}
    for runner in runners.split(","):
        var = f"{runner.strip().upper()}_RESULTS"
        source = (env or {}).get(var, runner)
        assert source in outputs, f"{var}: no step output {source!r} (the reporter would decode undefined)"
        results[runner] = json.loads(base64.b64decode(outputs[source], validate=True).decode("utf-8"))
        _check_results(runner, results[runner])
    # src/notify-classroom.js: runners without max_score are left out of both sums
    counted = [r for r in results.values() if r["max_score"]]
    total = sum(t["score"] for r in counted for t in r["tests"])
    top = sum(r["max_score"] for r in counted)
    fails = any(r["status"] in ("fail", "error") for r in results.values())
    return ClassroomReport(results, total, top, fails)


def read_github_output(path: Path) -> dict[str, str]:
    """``$GITHUB_OUTPUT``'s ``name=value`` lines (one-line values, as the kit writes them)."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
