"""``eoslab grade --class DIR``: what a class handed in (one folder per learner) into one gradebook.

Learners hand in lab notebooks, the JSON reports ``eoslab grade`` wrote, or both. Notebooks
without a report are graded here (with ``rerun``, every notebook), each with a time limit:
a notebook that hangs or crashes costs that learner, not the class run. Each report is
checked against its notebook's sha256; a mismatch is flagged, not counted.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eoslab.errors import EoslabError, GradingError
from eoslab.labcheck import CELL_TIMEOUT, grade_notebook

NOTEBOOK_LIMIT = 900.0
"""Per-notebook limit for --rerun: a lab runs in ~3 min here; 15 min means it hangs."""

SELF_REPORTED = "self-reported (untrusted)"
"""The ``graded by`` of a score taken from the learner's own report: it is as true as the learner is."""
GRADED_HERE = "instructor (no report handed in)"


def _learners(root: Path) -> list[Path]:
    if not root.is_dir():
        raise GradingError(f"{root} is not a folder: give the folder that holds one sub-folder per learner.")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise GradingError(f"{root} has no learner folders: put each learner's labs in {root}/<learner>/.")
    return folders


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def check_report(data: dict[str, Any], folder: Path) -> tuple[str, str]:
    """Does a report belong to the notebook handed in beside it? (``sha256 check`` column, and why not.)

    ``eoslab grade`` writes the sha256 of the notebook's bytes as graded: a notebook edited after
    grading, or a report copied from someone else, does not match.
    """
    tasks = data.get("tasks") or []
    if abs(sum(float(t.get("points", 0)) for t in tasks) - float(data.get("score", 0))) > 1e-9:
        return "edited", "the report's score is not the sum of its tasks' points: the report was edited; use --rerun."
    notebook = folder / str(data.get("notebook", ""))
    if not data.get("notebook") or not notebook.is_file():
        return "no notebook", (
            f"report without its notebook ({data.get('notebook')}): its sha256 cannot be checked; "
            "ask for the notebook too."
        )
    if _sha256(notebook) != data.get("sha256"):
        return "mismatch", (
            f"{notebook.name} does not match its report (sha256 differs: changed after grading, or another's "
            "report); use --rerun to grade the notebook itself."
        )
    return "ok", ""


REPORT_FIELDS = ("notebook", "score", "max_score")
"""What every report `eoslab grade` writes holds, and what the gradebook reads from it."""

_JSON_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


def _not_a_report(rep: Path, why: str) -> GradingError:
    return GradingError(
        f"{rep.name} is not an eoslab grade report: {why}; hand in the report `eoslab grade` wrote beside the "
        "notebook, or grade the notebook itself (--rerun)."
    )


def read_report(rep: Path) -> dict[str, Any]:
    """A learner's report, read once for every reader: a file that is not JSON, JSON that is not an object
    (``[]``, ``"x"``) or an object without a report's fields raises the same one-sentence GradingError, so each
    reader treats it as it treats any unreadable report instead of failing on it (an AttributeError)."""
    try:
        data = json.loads(rep.read_text())
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise _not_a_report(rep, f"it cannot be read as JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _not_a_report(rep, f"it holds {_JSON_KINDS.get(type(data), 'null')} where a JSON object belongs")
    missing = [k for k in REPORT_FIELDS if k not in data]
    if missing:
        raise _not_a_report(rep, f"it has no {', '.join(missing)}")
    return data


def _error_row(learner: str, notebook: str | None, error: str) -> dict[str, Any]:
    """A gradebook row that scores 0 and says why (a notebook that failed, a file that is no report)."""
    return {"learner": learner, "notebook": notebook, "score": 0, "max_score": None, "error": error}


def _reported(learner: Path) -> set[Any]:
    """The notebooks the learner's reports name (a report that is not JSON names none)."""
    reported = set()
    for rep in learner.glob("*.report.json"):
        try:
            reported.add(read_report(rep)["notebook"])
        except GradingError:
            pass
    return reported


def _grade_here(
    name: str, learner: Path, *, rerun: bool, limit: float, cell_timeout: int, progress: Callable[[str], None]
) -> tuple[list[dict[str, Any]], set[str]]:
    """Grade the notebooks handed in without a report (every one, with ``rerun``): a row for each that
    broke, and the names of those graded here."""
    rows: list[dict[str, Any]] = []
    graded: set[str] = set()
    reported = _reported(learner)
    for nb in sorted(learner.glob("lab*.ipynb")):
        if not rerun and nb.name in reported:
            continue
        progress(f"grading {name}/{nb.name} ...")
        graded.add(nb.name)
        try:
            grade_notebook(nb, timeout=limit, cell_timeout=cell_timeout)
        except EoslabError as exc:  # a broken notebook costs its learner only
            rows.append(_error_row(name, nb.name, str(exc)))
    return rows, graded


def _report_row(name: str, learner: Path, rep: Path, graded_here: set[str]) -> dict[str, Any]:
    """One report's row: its score and per-task points, and whether it belongs to the notebook beside it."""
    try:
        data = read_report(rep)
        check, problem = check_report(data, learner)
        points = {f"{t['task']} ({t['max_points']:g})": t["points"] for t in data.get("tasks") or []}
    except GradingError as exc:
        return _error_row(name, rep.name, str(exc))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # an object, but its tasks are no report's
        return _error_row(name, rep.name, str(_not_a_report(rep, f"its tasks cannot be read ({exc!r})")))
    row: dict[str, Any] = {
        "learner": name,
        "notebook": data["notebook"],
        "score": data["score"],
        "max_score": data["max_score"],
        "graded by": GRADED_HERE if data["notebook"] in graded_here else SELF_REPORTED,
        "sha256": str(data.get("sha256", ""))[:12],
        "sha256 check": check,
        "graded_at": data.get("graded_at"),
        "error": problem,
    }
    row.update(points)
    return row


def collect(
    root: Path,
    *,
    rerun: bool = False,
    limit: float = NOTEBOOK_LIMIT,
    cell_timeout: int = CELL_TIMEOUT,
    progress: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """One row per (learner, notebook): score, max, per-task points, the report's check, or what went wrong.

    A learner hands in lab notebooks, the JSON reports `eoslab grade` wrote, or both. A notebook
    without a report (or every notebook, with ``rerun``) is graded here, on the running cluster;
    a report is checked against the notebook beside it (:func:`check_report`), and one that does
    not match is flagged and left out of the class means.
    """
    rows: list[dict[str, Any]] = []
    for learner in _learners(root):
        rows.extend(
            learner_rows(learner.name, learner, rerun=rerun, limit=limit, cell_timeout=cell_timeout, progress=progress)
        )
    return rows


def learner_rows(
    name: str,
    folder: Path,
    *,
    rerun: bool = False,
    limit: float = NOTEBOOK_LIMIT,
    cell_timeout: int = CELL_TIMEOUT,
    progress: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """:func:`collect`'s rows of one learner, ``name``, whose notebooks and reports are in ``folder``."""
    rows, graded = _grade_here(name, folder, rerun=rerun, limit=limit, cell_timeout=cell_timeout, progress=progress)
    reports = sorted(folder.glob("*.report.json"))
    if not reports and not rows:
        rows.append(_error_row(name, None, "nothing handed in: no lab notebook and no report."))
    rows.extend(_report_row(name, folder, rep, graded) for rep in reports)
    return rows


def write_gradebook(rows: list[dict[str, Any]], path: Path) -> None:
    """The rows as CSV, the columns in order of first appearance; written aside and renamed into place,
    so a reader (or a crash) never sees half a gradebook."""
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    part = path.with_name(path.name + ".part")
    with part.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    os.replace(part, path)


def _notebook_lines(nb: str, rs: list[dict[str, Any]]) -> list[str]:
    """One notebook's class mean, then how many learners passed each of its tasks."""
    mean = sum(r["score"] for r in rs) / len(rs)
    lines = [f"  {nb}: mean {mean:.1f} / {rs[0]['max_score']:g} over {len(rs)} learners"]
    tasks = [k for k in rs[0] if k.endswith(")") and " (" in k]
    for t in tasks:
        passed = sum(1 for r in rs if r.get(t))
        lines.append(f"    {t}: {passed}/{len(rs)} passed")
    return lines


def summary(rows: list[dict[str, Any]]) -> str:
    learners = sorted({r["learner"] for r in rows})
    graded = [r for r in rows if r.get("notebook") and not r.get("error")]
    lines = [f"{len(learners)} learners, {len(graded)} graded notebooks"]
    by_nb: dict[str, list[dict[str, Any]]] = {}
    for r in graded:
        by_nb.setdefault(r["notebook"], []).append(r)
    for nb, rs in sorted(by_nb.items()):
        lines.extend(_notebook_lines(nb, rs))
    problems = [r for r in rows if r.get("error")]
    for r in problems:
        lines.append(f"  {r['learner']}: {r['error']}")
    return "\n".join(lines)
