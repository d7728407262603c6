"""``eoslab grade LAB.ipynb``: run a lab under nbval against the cluster, and score it.

A graded cell is a code cell whose metadata has ``{"eoslab": {"grade": {"task": ..., "points": ...,
"title": ...}}}`` (cells are found by that, never by position); ``"stretch": true`` there marks a task
that is optional in a one-day workshop: graded the same, its points shown apart from the core's. A task
passes when its cell ran to the end (not errored, not timed out, not xfailed after a timeout) AND its
check recorded a passing verdict in the grading log AND its answer cells, read by this
process, use no kit function that computes the answer (:mod:`eoslab.labcheck._forbidden`).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from eoslab._version import __version__
from eoslab.errors import EoslabError, GradingError
from eoslab.labcheck._checks import GRADE_LOG_ENV
from eoslab.labcheck._forbidden import forbidden_answers
from eoslab.labcheck._nbval_plugin import OUTCOMES_ENV

CELL_TIMEOUT = 120
"""Per-cell limit: a lab cell does seconds of work; two minutes means it hangs (nbval's default is 2000 s)."""


@dataclass
class TaskResult:
    task: str
    title: str
    points: float
    max_points: float
    passed: bool
    message: str
    cell_id: str | None
    stretch: bool = False


@dataclass
class Report:
    notebook: str
    sha256: str
    kit_version: str
    graded_at: str
    duration_s: float
    tasks: list[TaskResult] = field(default_factory=list)
    other_errors: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(t.points for t in self.tasks)

    @property
    def max_score(self) -> float:
        return sum(t.max_points for t in self.tasks)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["score"], data["max_score"] = self.score, self.max_score
        return data

    def table(self) -> str:
        lines = [f"{self.notebook}: {self.score:g} / {self.max_score:g} points{_apart(self.tasks)}", ""]
        lines.append(f"{'task':<8}{'points':>8}  {'':<6}{'title':<34}message")
        for t in self.tasks:
            mark = "pass" if t.passed else "FAIL"
            title = f"{t.title} (stretch)" if t.stretch else t.title
            lines.append(f"{t.task:<8}{t.points:>4g}/{t.max_points:<3g}  {mark:<6}{title[:32]:<34}{t.message}")
        for err in self.other_errors:
            lines.append(f"  note: {err}")
        return "\n".join(lines)


def _apart(tasks: list[TaskResult]) -> str:
    """`` (core 7 / 8, stretch 0 / 2)`` when a lab has stretch tasks: what a one-day workshop asked for, apart."""
    stretch = [t for t in tasks if t.stretch]
    if not stretch:
        return ""
    core = [t for t in tasks if not t.stretch]
    return (
        f" (core {sum(t.points for t in core):g} / {sum(t.max_points for t in core):g}, "
        f"stretch {sum(t.points for t in stretch):g} / {sum(t.max_points for t in stretch):g})"
    )


def graded_cells(nb: dict[str, Any]) -> list[dict[str, Any]]:
    cells = []
    for cell in nb.get("cells", []):
        grade = cell.get("metadata", {}).get("eoslab", {}).get("grade")
        if cell.get("cell_type") == "code" and grade:
            cells.append({"cell_id": cell.get("id"), **grade})
    return cells


def _run_nbval(
    path: Path, outcomes: Path, log: Path, cell_timeout: int, timeout: float | None, extra: Mapping[str, str]
) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(path),
        "--nbval-lax",
        "--nbval-current-env",
        f"--nbval-cell-timeout={cell_timeout}",
        "-p",
        "eoslab.labcheck._nbval_plugin",
        "-p",
        "no:cacheprovider",
        "-q",
        "--no-header",
    ]
    env = {**os.environ, **extra, OUTCOMES_ENV: str(outcomes), GRADE_LOG_ENV: str(log)}
    proc = subprocess.Popen(
        cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, cwd=path.parent
    )
    _RUNNING.add(proc.pid)
    try:
        proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)  # pytest and its kernel: a hung notebook costs its learner only
        proc.communicate()
        raise GradingError(f"{path.name} did not finish within {timeout:g} s: it was stopped and scores 0.") from None
    except BaseException:  # Ctrl-C: its own session never saw the terminal's signal, so it is ended here
        _kill_group(proc.pid)
        proc.communicate()
        raise
    finally:
        _RUNNING.discard(proc.pid)


_RUNNING: set[int] = set()
"""The nbval runs (each its own process group: pytest and its kernel) this process has in progress."""


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop_nbval_runs() -> None:
    """End every nbval run this process has in progress: a class run's worker, told to stop (Ctrl-C)
    or orphaned (its parent killed), leaves no notebook running on the cluster."""
    for pgid in list(_RUNNING):
        _kill_group(pgid)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _judge_cell(out: dict[str, Any] | None, ver: dict[str, Any] | None, cell_timeout: int) -> tuple[bool, str]:
    """One graded cell: passed or not, and the sentence the learner reads (the check's, or why there is none)."""
    if out is None:
        return False, "not run."
    if out["timeout"]:
        return False, f"the cell did not finish within {out.get('guard') or cell_timeout:g} s (timed out)."
    if out["xfail"] or out["outcome"] == "skipped":
        return False, "not run: an earlier cell timed out and the kernel was stopped."
    if ver is not None:
        return bool(ver["passed"]) and out["outcome"] == "passed", ver["message"]
    if out["outcome"] != "passed":
        return False, f"the check cell raised: {out['error_tail']}"
    return False, "the cell ran but no check recorded a verdict (was the check call removed?)."


def score(
    nb: dict[str, Any],
    outcomes: list[dict[str, Any]],
    verdicts: list[dict[str, Any]],
    cell_timeout: int = CELL_TIMEOUT,
    refused: Mapping[str, str] | None = None,
) -> tuple[list[TaskResult], list[str]]:
    """Pure: the tasks' results from the notebook, the cell outcomes and the checks' verdicts; a task in
    ``refused`` (task -> why) fails with that sentence whatever its check said."""
    by_cell = {o["cell_id"]: o for o in outcomes}
    last_verdict = {v["task"]: v for v in verdicts}
    results = []
    for g in graded_cells(nb):
        task, max_points = str(g["task"]), float(g.get("points", 1))
        title = g.get("title", "")
        passed, msg = _judge_cell(by_cell.get(g["cell_id"]), last_verdict.get(task), cell_timeout)
        if refused and task in refused:
            passed, msg = False, refused[task]
        points = max_points if passed else 0.0
        results.append(TaskResult(task, title, points, max_points, passed, msg, g["cell_id"], g.get("stretch") is True))
    graded_ids = {g["cell_id"] for g in graded_cells(nb)}
    others = [
        f"cell {o['cell_id']} failed: {o['error_tail']}"
        for o in outcomes
        if o["cell_id"] not in graded_ids and (o["outcome"] == "failed" or o["timeout"])
    ]
    return results, others


def grade_notebook(
    path: str | Path,
    *,
    cell_timeout: int = CELL_TIMEOUT,
    timeout: float | None = None,
    write: bool = True,
    env: Mapping[str, str] | None = None,
) -> Report:
    """Run ``path`` under nbval and score it; write ``<name>.report.json`` beside it. ``env`` is added to the
    environment of nbval and the notebook's kernel (a grading cluster's port offset and data folder)."""
    path = Path(path).resolve()
    if not path.is_file():
        raise GradingError(f"There is no notebook {path}: give the path of a lab, e.g. labs/lab01_idempotence.ipynb.")
    raw = path.read_bytes()
    try:
        nb = json.loads(raw)
    except ValueError as exc:
        raise GradingError(f"{path.name} is not a valid notebook ({exc}): restore it from the lab folder.") from None
    if not graded_cells(nb):
        raise GradingError(f"{path.name} has no graded cells: is it a lab notebook?")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="eoslab-grade-") as tmp:
        outcomes_file, log_file = Path(tmp) / "outcomes.jsonl", Path(tmp) / "verdicts.jsonl"
        timed_out = None
        try:
            _run_nbval(path, outcomes_file, log_file, cell_timeout, timeout, env or {})
        except EoslabError as exc:
            timed_out = str(exc)
        refused = forbidden_answers(nb)
        tasks, others = score(nb, _read_jsonl(outcomes_file), _read_jsonl(log_file), cell_timeout, refused)
    if timed_out:
        tasks = [TaskResult(t.task, t.title, 0.0, t.max_points, False, timed_out, t.cell_id, t.stretch) for t in tasks]
    report = Report(
        path.name,
        hashlib.sha256(raw).hexdigest(),
        __version__,
        time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        round(time.monotonic() - t0, 1),
        tasks,
        others,
    )
    if write:
        path.with_suffix(".report.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return report
