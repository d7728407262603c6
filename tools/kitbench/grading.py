"""``python -m tools.kitbench grading``: how much faster a class is graded by N workers, each on a cluster of its
own, than by one.

The class is ``learners`` plain folders (``learner1``, ``learner2`` ...), each holding copies of the course's
solutions of ``labs``. With lab 06, each also holds one complete module-06 run: the newest under the runs folder,
else the quick matrix measured once, before the timing (lab 06 is then graded on runs, as a submitted class is).
Two identical copies are graded by the instructor's rerun (``eoslab grade --class``): the first with 1 worker,
then the second with N. Printed: the seconds per lab per learner from each run's journal (``duration_s``), the
wall times, the notebooks per hour and the ratio N vs 1 against its target, the grading clusters' starts, how
busy the machine was; and whether the two gradebooks agree (the exit code is 1 when they do not). Written to
``runs/grading-<run_id>/``: the figures (``grading.json``), the report and both journals. No ``summary.parquet``
there, so module 06's readers pass the folder by.

It grades with :func:`eoslab.classroom.grade_class` itself; a unit test hands in a stand-in (``grade=``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from eoslab._progress import progress_bar
from eoslab.classroom import grade_class
from eoslab.cluster import Cluster
from eoslab.errors import SetupError
from eoslab.runs import FORMAT, describe_machine, new_run_id, run_folders, run_format, runs_dir
from tools.kitbench.targets import CLASS_GRADING_MIN, CLASS_LEARNERS, GRADING_WORKERS_RATIO

LABS = ("lab01", "lab02", "lab03", "lab04", "lab05", "lab06")
JOURNAL = "gradebook.jsonl"

GradeClass = Callable[..., Any]
"""``eoslab.classroom.grade_class``: (class folder, course=, workers=, progress=) -> its ClassGrades."""


def chosen_labs(text: str | None) -> tuple[tuple[str, ...], list[str]]:
    """``--labs 01,lab04`` -> the labs, in course order, and the names that are no lab (default: all six)."""
    if not text:
        return LABS, []
    names = [x.strip() for x in text.split(",") if x.strip()]
    labs = {n if n.startswith("lab") else f"lab{n.zfill(2)}" for n in names}
    unknown = sorted(n for n in labs if n not in LABS)
    return tuple(lab for lab in LABS if lab in labs), unknown


@dataclass
class GradingRun:
    """One grading of the class: its workers, wall time, journal rows and the grading clusters' starts."""

    workers: int
    wall_s: float
    rows: dict[tuple[str, str], dict[str, Any]]
    starts: dict[int, float] = field(default_factory=dict)
    busy_cores: float = 0.0

    @property
    def per_hour(self) -> float:
        return len(self.rows) / self.wall_s * 3600 if self.wall_s else 0.0

    def seconds(self, learner: str, lab: str) -> float | None:
        for (who, notebook), row in self.rows.items():
            if who == learner and notebook.startswith(f"{lab}_"):
                return float(row["duration_s"]) if row.get("duration_s") is not None else None
        return None

    def scores(self) -> dict[tuple[str, str], Any]:
        return {k: (r["score"], r.get("error", "")) for k, r in self.rows.items()}


def read_rows(journal: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """A class run's journal by (learner, notebook): the last line of each wins."""
    rows = {}
    for line in journal.read_text().splitlines() if journal.is_file() else []:
        row = json.loads(line)
        rows[(row["learner"], row["notebook"])] = row
    return rows


def _workers(n: int) -> str:
    return f"{n} worker" + ("s" if n != 1 else "")


def table(runs: list[GradingRun], labs: tuple[str, ...], learners: int) -> list[str]:
    """Seconds per lab (rows) per learner, one column per run."""
    who = [f"learner{i}" for i in range(1, learners + 1)]
    width = max(18, 8 * learners)
    lines = [f"seconds per notebook ({', '.join(who)}; the journal's duration_s):"]
    lines.append((f"{'lab':<8}" + "".join(f"{_workers(r.workers):<{width}}" for r in runs)).rstrip())
    for lab in labs:
        cells = []
        for r in runs:
            secs = [r.seconds(w, lab) for w in who]
            cells.append(", ".join("-" if s is None else f"{s:.1f}" for s in secs))
        lines.append((f"{lab:<8}" + "".join(f"{c:<{width}}" for c in cells)).rstrip())
    return lines


def _run_line(r: GradingRun, cores: int) -> str:
    line = (
        f"{_workers(r.workers) + ':':<11}{len(r.rows)} notebooks in {r.wall_s:.0f} s ({r.per_hour:.0f} per hour), "
        f"machine busy {r.busy_cores:.1f} of {cores} cores"
    )
    if r.starts:
        took = ", ".join(f"{k} ready after {s:.0f} s" for k, s in r.starts.items())
        line += f"; grading cluster {took} (slot 0 grading meanwhile)"
    return line


def differences(one: GradingRun, many: GradingRun) -> list[str]:
    """Where the two gradebooks disagree: a score (or an error) that differs, a notebook one of them lacks."""
    a, b = one.scores(), many.scores()
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            got = f"{a.get(key, 'missing')} with {_workers(one.workers)}, {b.get(key, 'missing')} with {many.workers}"
            out.append(f"  {key[0]}/{key[1]}: {got}")
    return out


def summary(one: GradingRun, many: GradingRun, labs: tuple[str, ...], cores: int) -> list[str]:
    """The wall times, the ratio against its target, the class-size estimate and whether the grades agree."""
    ratio = one.wall_s / many.wall_s if many.wall_s else 0.0
    verdict = "met" if ratio >= GRADING_WORKERS_RATIO else "UNDER TARGET"
    lines = [_run_line(one, cores), _run_line(many, cores)]
    lines.append(f"ratio {_workers(many.workers)} vs 1: {ratio:.2f}   target ≥ {GRADING_WORKERS_RATIO:g}  {verdict}")
    if labs == LABS and many.per_hour:
        minutes = CLASS_LEARNERS * len(LABS) / many.per_hour * 60
        ok = "met" if minutes <= CLASS_GRADING_MIN else "OVER TARGET"
        lines.append(
            f"a class of {CLASS_LEARNERS} at this rate: {minutes:.0f} min with {_workers(many.workers)} "
            f"(target ≤ {CLASS_GRADING_MIN:g} min on an instructor's machine: {ok} here)"
        )
    diff = differences(one, many)
    lines += ["the two gradebooks agree: every score the same"] if not diff else ["the gradebooks DIFFER:", *diff]
    return lines


def make_class(root: Path, course: Path, learners: int, labs: tuple[str, ...], runs: Path | None) -> Path:
    """``root/learner1`` ... each with a copy of the course's solutions of ``labs`` (and of the run ``runs``)."""
    found = {lab: sorted((course / "solutions").glob(f"{lab}_*.ipynb")) for lab in labs}
    missing = [lab for lab, nbs in found.items() if not nbs]
    if missing:
        raise SetupError(
            f"{course / 'solutions'} has no {', '.join(missing)}: give your course folder with --course, or leave "
            "those labs out with --labs."
        )
    for i in range(1, learners + 1):
        folder = root / f"learner{i}"
        folder.mkdir(parents=True)
        for nbs in found.values():
            shutil.copy(nbs[0], folder / nbs[0].name)
        if runs is not None:
            shutil.copytree(runs, folder / "runs" / runs.name)
    return root


def learner_run(cluster: Cluster, root: str | Path | None, scratch: Path) -> Path:
    """One complete run for lab 06: the newest of this kit's format under the runs folder, else the quick
    matrix measured now (about a minute, before any timing)."""
    found = [f for f in run_folders(runs_dir(root)) if run_format(f) == FORMAT]
    if found:
        return max(found, key=lambda f: (f / "env.parquet").stat().st_mtime)
    from eoslab.bench.producers import run_matrix

    print(f"no run under {runs_dir(root)}: measuring the quick matrix once, for lab 06, before the timing")
    return run_matrix(cluster, "quick", scratch / "runs")


def _busy(before: Any, after: Any) -> float:
    """CPU seconds the machine spent on anything but idling between two ``psutil.cpu_times()``."""
    idle = float(after.idle - before.idle) + float(getattr(after, "iowait", 0.0) - getattr(before, "iowait", 0.0))
    total = float(sum(after) - sum(before))
    return max(0.0, total - idle)


def timed(grade: GradeClass, klass: Path, course: Path, workers: int, bar: Any) -> GradingRun:
    """Grade ``klass`` with ``workers``, timed; each notebook graded moves ``bar`` on."""

    def one_more(line: str) -> None:
        bar.update(1)
        bar.write(line)

    cpu, t0 = psutil.cpu_times(), time.monotonic()
    book = grade(klass, course=course, workers=workers, progress=one_more)
    wall = time.monotonic() - t0
    busy = _busy(cpu, psutil.cpu_times()) / wall if wall else 0.0
    return GradingRun(workers, wall, read_rows(klass / JOURNAL), dict(book.cluster_starts), busy)


@contextmanager
def _scratch(keep: Path | None, run_id: str) -> Iterator[Path]:
    """Where the classes are made: a folder of this run's under ``keep``, else a temporary one."""
    if keep is not None:
        folder = keep / f"grading-{run_id}"
        folder.mkdir(parents=True)
        yield folder
        return
    with tempfile.TemporaryDirectory(prefix="eoslab-bench-grading-") as tmp:
        yield Path(tmp)


def _write(folder: Path, runs: list[GradingRun], lines: list[str], classes: list[Path]) -> Path:
    folder.mkdir(parents=True)
    figures = [
        {"workers": r.workers, "wall_s": round(r.wall_s, 1), "per_hour": round(r.per_hour, 1), "starts": r.starts}
        | {"busy_cores": round(r.busy_cores, 2), "notebooks": len(r.rows)}
        for r in runs
    ]
    data = {"machine": describe_machine(), "runs": figures, "ratio": round(runs[0].wall_s / runs[1].wall_s, 3)}
    (folder / "grading.json").write_text(json.dumps(data, indent=2) + "\n")
    (folder / "report.txt").write_text("\n".join(lines) + "\n")
    for r, klass in zip(runs, classes, strict=True):
        if (klass / JOURNAL).is_file():
            shutil.copy(klass / JOURNAL, folder / f"journal-{r.workers}w.jsonl")
    return folder


def bench_grading(
    cluster: Cluster,
    *,
    course: Path,
    learners: int = 2,
    workers: int = 2,
    labs: tuple[str, ...] = LABS,
    root: str | Path | None = None,
    keep: Path | None = None,
    grade: GradeClass = grade_class,
) -> int:
    """Grade the generated class with 1 worker, then with ``workers``; print and write the figures. ``root`` is
    the runs folder; ``keep`` keeps the two classes there instead of a temporary folder."""
    cluster.require_running()
    n, run_id = learners * len(labs), new_run_id()
    print(
        f"python -m tools.kitbench grading on {describe_machine()}: {learners} learner(s) × {len(labs)} lab(s) "
        f"({', '.join(labs)}), 1 worker then {_workers(workers)} on clusters of their own"
    )
    with _scratch(keep, run_id) as scratch:
        runs = learner_run(cluster, root, scratch) if "lab06" in labs else None
        classes = [make_class(scratch / f"class-{w}w", course, learners, labs, runs) for w in (1, workers)]
        with progress_bar("bench grading", total=2 * n, unit=" notebooks", delay=0) as bar:
            graded = [timed(grade, klass, course, w, bar) for klass, w in zip(classes, (1, workers), strict=True)]
        lines = table(graded, labs, learners) + summary(graded[0], graded[1], labs, os.cpu_count() or 1)
        lines.append(f"load now {os.getloadavg()[0]:.1f}")
        folder = _write(runs_dir(root) / f"grading-{run_id}", graded, lines, classes)
    print("\n".join(lines))
    print(f"written to {folder}" + (f"; the classes kept in {scratch}" if keep else ""))
    return 0 if not differences(graded[0], graded[1]) else 1
