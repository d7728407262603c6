"""What ``eoslab grade --class`` hands to the instructor's other tools, from the rerun's results.

- ``grades-lms.csv``: one row per learner, one column per lab (the points the rerun gave), and the total,
  in the shape Canvas's gradebook import reads (canvas-lms ``app/models/gradebook_importer.rb``): the
  header starts ``Student, ID, SIS User ID, SIS Login ID, Section``, a ``Points Possible`` row follows it,
  and the total is named ``Final Points``, a column the importer leaves alone (it recomputes its own).
  A learner is matched by name (``ID`` and the SIS columns are left empty, as the importer allows): the
  name the learner gave ``eoslab submit``. Other LMSs (Moodle's "Import grades from CSV") map the
  ``Student`` column to a user field and the lab columns to grade items by hand; their ``Points
  Possible`` row is then one line to skip.
- ``feedback/<learner>.md``: per learner, each lab's points and each task's message from the rerun (what
  nbgrader's ``generate_feedback`` and otter's per-test output give back to a learner).

The labs are those of the course someone in the class handed in (:func:`class_labs`). A lab a learner
did not hand in scores 0 in the CSV and is listed as such in the feedback; a hand-in that
could not be read at all (no learner name to match) gets no row and is named in the run's notes instead.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eoslab.classroom._submission import slug
from eoslab.classroom._trusted import instructor_lab
from eoslab.labcheck import graded_cells

LMS_CSV = "grades-lms.csv"
FEEDBACK = "feedback"

STUDENT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
"""Canvas's student columns, in the order its importer reads them (the last one must be ``Section``)."""
POINTS_POSSIBLE = "Points Possible"
TOTAL = "Final Points"
"""The total's header: one of the importer's ``NON_ASSIGNMENT_COLUMN_HEADERS``, so it is read, never imported."""


@dataclass(frozen=True)
class Lab:
    """One lab of the course: its ``labNN`` key, its column (the notebook's stem) and its points."""

    key: str
    column: str
    max_points: float


def lab_key(notebook: str) -> str:
    """``lab01`` for ``lab01_idempotence.ipynb``; "" for a name that is not a lab's."""
    m = re.match(r"(lab\d+)_", notebook)
    return m.group(1) if m else ""


def course_labs(course: Path) -> list[Lab]:
    """The course's labs (``solutions/``, else ``labs/``), each with the points its graded cells carry."""
    for folder in ("solutions", "labs"):
        found = sorted(p for p in (course / folder).glob("lab*.ipynb") if lab_key(p.name))
        if found:
            break
    labs = []
    for path in found:
        cells = graded_cells(instructor_lab(course, path.name))
        labs.append(Lab(lab_key(path.name), path.stem, sum(float(c.get("points", 1)) for c in cells)))
    return labs


def _points(value: float) -> str:
    return f"{value:g}"


def _lab_scores(results: list[dict[str, Any]]) -> dict[str, float]:
    """A learner's points per lab key (the best of two notebooks handed in for one lab)."""
    best: dict[str, float] = {}
    for r in results:
        key = lab_key(str(r.get("notebook", "")))
        if key:
            best[key] = max(best.get(key, 0.0), float(r.get("score") or 0))
    return best


def class_labs(labs: list[Lab], results: Mapping[str, list[dict[str, Any]]]) -> list[Lab]:
    """The course's labs someone in the class handed in: the CSV's columns and the feedback's total (a one-day
    workshop that set labs 01-03 is graded out of those three)."""
    handed = {lab_key(str(r.get("notebook", ""))) for rs in results.values() for r in rs}
    return [lab for lab in labs if lab.key in handed]


def write_lms_csv(path: Path, columns: list[Lab], results: Mapping[str, list[dict[str, Any]]]) -> Path:
    """``results`` (learner -> their rerun rows) as :data:`LMS_CSV` at ``path``, a column per lab of
    ``columns`` (see the module docstring); written aside and renamed into place."""
    blank = [""] * (len(STUDENT_COLUMNS) - 1)
    lines = [
        [*STUDENT_COLUMNS, *(lab.column for lab in columns), TOTAL],
        [POINTS_POSSIBLE, *blank, *(_points(lab.max_points) for lab in columns)]
        + [_points(sum(lab.max_points for lab in columns))],
    ]
    for learner in sorted(results, key=str.casefold):
        scores = _lab_scores(results[learner])
        points = [scores.get(lab.key, 0.0) for lab in columns]
        lines.append([learner, *blank, *(_points(p) for p in points), _points(sum(points))])
    part = path.with_name(path.name + ".part")
    with part.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(lines)
    os.replace(part, path)
    return path


def feedback_name(learner: str) -> str:
    """The learner's feedback file: their name made file-safe, and a hash so that "Ana M" and "Ana_M" differ."""
    return f"{slug(learner)}-{hashlib.sha256(learner.encode()).hexdigest()[:6]}.md"


def _cell(text: Any) -> str:
    """A value as one Markdown table cell: no line breaks, no column bars."""
    return re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip()


def _lab_section(lab: Lab, row: dict[str, Any]) -> list[str]:
    score, top = float(row.get("score") or 0), row.get("max_score")
    lines = [f"## {lab.column}: {_points(score)} / {_points(float(top) if top else lab.max_points)} points", ""]
    if row.get("error"):
        lines += [f"Not graded: {_cell(row['error'])}", ""]
        return lines
    lines += ["| task | title | points | message |", "| --- | --- | --- | --- |"]
    for t in row.get("tasks") or []:
        got = f"{_points(float(t['points']))} / {_points(float(t['max_points']))}"
        lines.append(f"| {_cell(t['task'])} | {_cell(t.get('title', ''))} | {got} | {_cell(t.get('message', ''))} |")
    lines += [f"- {_cell(e)}" for e in row.get("other_errors") or []]
    return [*lines, ""]


def _score(row: dict[str, Any]) -> float:
    return float(row.get("score") or 0)


def _best_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Lab key -> the learner's row with the best score for it (the first of equal ones)."""
    best: dict[str, dict[str, Any]] = {}
    for r in rows:
        key = lab_key(str(r.get("notebook", "")))
        if key and (key not in best or _score(r) > _score(best[key])):
            best[key] = r
    return best


def feedback_text(learner: str, labs: list[Lab], rows: list[dict[str, Any]], header: str) -> str:
    """One learner's feedback (Markdown): the total, then each lab handed in with its tasks' messages, then
    the course's labs not handed in."""
    by_key = _best_rows(rows)
    scores = _lab_scores(rows)
    total = sum(scores.get(lab.key, 0.0) for lab in labs)
    lines = [f"# Lab feedback for {learner}", "", header, ""]
    lines += [f"**Total: {_points(total)} / {_points(sum(lab.max_points for lab in labs))} points.**", ""]
    for lab in labs:
        if lab.key in by_key:
            lines += _lab_section(lab, by_key[lab.key])
    missing = [lab.column for lab in labs if lab.key not in by_key]
    if missing:
        lines += [f"Not handed in (0 points): {', '.join(missing)}.", ""]
    return "\n".join(lines)


def write_feedback(folder: Path, labs: list[Lab], results: Mapping[str, list[dict[str, Any]]], header: str) -> Path:
    """A :func:`feedback_text` per learner in ``folder`` (created), named by :func:`feedback_name`; the
    folder also gets ``index.json`` (learner -> file), so the files can be sent back by a script."""
    folder.mkdir(parents=True, exist_ok=True)
    index = {}
    for learner, rows in results.items():
        name = feedback_name(learner)
        (folder / name).write_text(feedback_text(learner, labs, rows, header), encoding="utf-8")
        index[learner] = name
    (folder / "index.json").write_text(json.dumps(index, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return folder
