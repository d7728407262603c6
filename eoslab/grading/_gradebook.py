"""``eoslab grade --class DIR``: a class's reports (one folder per learner) into one gradebook.

With ``rerun`` the notebooks themselves are graded again, each with a time
limit: a notebook that hangs or crashes costs that learner, not the class run.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eoslab.errors import EoslabError
from eoslab.grading._report import CELL_TIMEOUT, grade_notebook

NOTEBOOK_LIMIT = 900.0
"""Per-notebook limit for --rerun: a lab runs in ~3 min here; 15 min means it hangs."""


def _learners(root: Path) -> list[Path]:
    if not root.is_dir():
        raise EoslabError(f"{root} is not a folder: give the folder that holds one sub-folder per learner.")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders:
        raise EoslabError(f"{root} has no learner folders: put each learner's labs in {root}/<learner>/.")
    return folders


def collect(
    root: Path,
    *,
    rerun: bool = False,
    limit: float = NOTEBOOK_LIMIT,
    cell_timeout: int = CELL_TIMEOUT,
    progress: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """One row per (learner, notebook): score, max, per-task points, or why it could not be graded."""
    rows: list[dict[str, Any]] = []
    for learner in _learners(root):
        if rerun:
            for nb in sorted(learner.glob("lab*.ipynb")):
                progress(f"grading {learner.name}/{nb.name} ...")
                try:
                    grade_notebook(nb, timeout=limit, cell_timeout=cell_timeout)
                except EoslabError as exc:  # a broken notebook costs its learner only
                    rows.append(
                        {"learner": learner.name, "notebook": nb.name, "score": 0, "max_score": None, "error": str(exc)}
                    )
        reports = sorted(learner.glob("*.report.json"))
        if not reports and not rerun:
            rows.append(
                {
                    "learner": learner.name,
                    "notebook": None,
                    "score": 0,
                    "max_score": None,
                    "error": "no report: the learner has not run `eoslab grade` (or use --rerun).",
                }
            )
        for rep in reports:
            data = json.loads(rep.read_text())
            row: dict[str, Any] = {
                "learner": learner.name,
                "notebook": data["notebook"],
                "score": data["score"],
                "max_score": data["max_score"],
                "sha256": data["sha256"][:12],
                "graded_at": data["graded_at"],
                "error": "",
            }
            for t in data["tasks"]:
                row[f"{t['task']} ({t['max_points']:g})"] = t["points"]
            rows.append(row)
    return rows


def write_gradebook(rows: list[dict[str, Any]], path: Path) -> None:
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)


def summary(rows: list[dict[str, Any]]) -> str:
    learners = sorted({r["learner"] for r in rows})
    graded = [r for r in rows if r.get("notebook") and not r.get("error")]
    lines = [f"{len(learners)} learners, {len(graded)} graded notebooks"]
    by_nb: dict[str, list[dict[str, Any]]] = {}
    for r in graded:
        by_nb.setdefault(r["notebook"], []).append(r)
    for nb, rs in sorted(by_nb.items()):
        mean = sum(r["score"] for r in rs) / len(rs)
        lines.append(f"  {nb}: mean {mean:.1f} / {rs[0]['max_score']:g} over {len(rs)} learners")
        tasks = [k for k in rs[0] if k.endswith(")") and " (" in k]
        for t in tasks:
            passed = sum(1 for r in rs if r.get(t))
            lines.append(f"    {t}: {passed}/{len(rs)} passed")
    problems = [r for r in rows if r.get("error")]
    for r in problems:
        lines.append(f"  {r['learner']}: {r['error']}")
    return "\n".join(lines)
