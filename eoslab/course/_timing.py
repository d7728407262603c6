"""How long the course takes: each module's core path (its words at a stated reading speed, plus its
code cells' run times measured on a real run) and its lab (minutes per graded task, plus the lab's run
time if measured), the deep dives apart, and whether the core path with its labs fits a one-day
workshop. A schedule built from measured times, not guesses.

The run times come from the times file that ``eoslab course time --measure`` writes (``_measure``):
``{notebook: {"cells": {cell id: seconds}, "total_s": ..., "measured_on": {...}}}``. A cell missing
from it is counted as "not measured" (and as no time) rather than guessed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from eoslab.course._reading import (
    Stretch,
    code_cells,
    key,
    lab_of,
    module_number,
    read_notebook,
    split,
    task_span,
)
from eoslab.errors import DataError

READING_WPM = 120
"""Words a minute: a learner reads a technical page with its diagrams slowly, then looks at the output."""

LAB_MINUTES_PER_TASK = 10
"""A graded task: read it, write a few lines, run the check, fix once."""

WORKSHOP_MINUTES = 6 * 60
"""A one-day workshop's teaching time, breaks and lunch apart."""

TIMES_FILE = "docs/course-times.json"
"""Where the measured run times live, from the course's root (committed: the figures it stands for)."""


@dataclass(frozen=True)
class NotebookTimes:
    """One notebook's measured run: seconds per code cell, the whole run, the machine, what went wrong."""

    cells: dict[str, float]
    total_s: float
    measured_on: dict[str, Any]
    error: str | None = None


@dataclass(frozen=True)
class Timed:
    """A stretch of a notebook, timed: its reading and the run time of its measured code cells."""

    title: str
    words: int
    reading_min: float
    code_cells: int
    not_measured: int
    run_min: float

    @property
    def minutes(self) -> float:
        return self.reading_min + self.run_min


@dataclass(frozen=True)
class StretchTask:
    """A lab task whose grade says ``"stretch": true``: graded like any other, but optional in a one-day
    workshop (expert material, or a skill an earlier task already graded), so it stays off the core path
    and is listed apart, like a deep dive: its minutes per task and the run time of its own cells."""

    task: str
    title: str
    task_min: float
    code_cells: int
    not_measured: int
    run_min: float

    @property
    def minutes(self) -> float:
        return self.task_min + self.run_min


@dataclass(frozen=True)
class LabTime:
    """A module's lab on the core path: its core graded tasks at a stated number of minutes each, plus the
    run time of its cells but the stretch tasks' own; the stretch tasks apart."""

    notebook: str
    tasks: int
    task_min: float
    code_cells: int
    not_measured: int
    run_min: float
    stretch: tuple[StretchTask, ...] = ()

    @property
    def minutes(self) -> float:
        return self.task_min + self.run_min


@dataclass(frozen=True)
class ModuleTime:
    module: str
    notebook: str
    core: Timed
    lab: LabTime | None
    deep_dives: tuple[Timed, ...]
    optional: str | None = None
    """Why the whole module is off a one-day workshop's core path (its notebook's metadata), or None."""

    @property
    def minutes(self) -> float:
        """The module's core reading and run time, and its lab (counted in the course's core path unless the
        module is optional)."""
        return self.core.minutes + (self.lab.minutes if self.lab else 0.0)


def read_times(path: Path) -> dict[str, NotebookTimes]:
    """The times file, or nothing measured yet if there is none."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(
            f"{path} is not a times file ({exc}): measure again with `eoslab course time --measure`."
        ) from None
    if not isinstance(data, dict):
        raise DataError(
            f"{path} is not a times file (not an object): measure again with `eoslab course time --measure`."
        )
    return {name: _entry(path, name, entry) for name, entry in data.items()}


def _entry(path: Path, name: str, entry: Any) -> NotebookTimes:
    cells = entry.get("cells") if isinstance(entry, dict) else None
    if not isinstance(cells, dict) or not all(_seconds(v) for v in cells.values()):
        raise DataError(
            f"{path}: the entry of {name} has no cells' seconds as `eoslab course time --measure` writes them; "
            "measure it again."
        )
    measured_on = entry.get("measured_on")
    error = entry.get("error")
    return NotebookTimes(
        cells={str(c): float(s) for c, s in cells.items()},
        total_s=float(entry["total_s"]) if _seconds(entry.get("total_s")) else sum(cells.values()),
        measured_on=measured_on if isinstance(measured_on, dict) else {},
        error=str(error) if error else None,
    )


def _seconds(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def timed(stretch: Stretch, seconds: Mapping[str, float], wpm: float) -> Timed:
    measured = [seconds[c] for c in stretch.cells if c in seconds]
    return Timed(
        title=stretch.title,
        words=stretch.words,
        reading_min=stretch.words / wpm,
        code_cells=len(stretch.cells),
        not_measured=len(stretch.cells) - len(measured),
        run_min=sum(measured) / 60,
    )


def lab_time(root: Path, lab: Path, times: Mapping[str, NotebookTimes], minutes_per_task: float) -> LabTime:
    from eoslab.labcheck import graded_cells

    nb = read_notebook(lab)
    seconds = _cells(times, key(root, lab))
    graded = graded_cells(nb)
    stretch, apart = [], set[str]()
    for g in (g for g in graded if g.get("stretch") is True):
        cells = task_span(nb, str(g["cell_id"]))[1]
        apart.update(cells)
        run = timed(Stretch(str(g["task"]), 0, cells), seconds, 1.0)
        stretch.append(
            StretchTask(
                str(g["task"]), str(g.get("title", "")), minutes_per_task, run.code_cells, run.not_measured, run.run_min
            )
        )
    tasks = len(graded) - len(stretch)
    core = timed(Stretch("lab", 0, tuple(c for c in code_cells(nb) if c not in apart)), seconds, 1.0)
    return LabTime(
        notebook=key(root, lab),
        tasks=tasks,
        task_min=tasks * minutes_per_task,
        code_cells=core.code_cells,
        not_measured=core.not_measured,
        run_min=core.run_min,
        stretch=tuple(stretch),
    )


def _cells(times: Mapping[str, NotebookTimes], name: str) -> dict[str, float]:
    found = times.get(name)
    return found.cells if found else {}


def module_time(
    root: Path, path: Path, times: Mapping[str, NotebookTimes], *, wpm: float, lab_minutes_per_task: float
) -> ModuleTime:
    """One module: its core path and deep dives from its notebook, its lab from ``solutions/`` (or ``labs/``)."""
    from eoslab.course._reading import optional_reason

    name = key(root, path)
    nb = read_notebook(path)
    core, dives = split(nb, name)
    seconds = _cells(times, name)
    lab = lab_of(root, module_number(path))
    return ModuleTime(
        module=module_number(path),
        notebook=name,
        core=timed(core, seconds, wpm),
        lab=lab_time(root, lab, times, lab_minutes_per_task) if lab else None,
        deep_dives=tuple(timed(d, seconds, wpm) for d in dives),
        optional=optional_reason(nb),
    )


@dataclass(frozen=True)
class CourseTime:
    """The course's modules, timed, and what they add up to."""

    modules: tuple[ModuleTime, ...]
    wpm: float
    lab_minutes_per_task: float
    times_file: str
    measurements: dict[str, NotebookTimes]

    @property
    def core_path_min(self) -> float:
        return sum(m.minutes for m in self.modules if not m.optional)

    @property
    def optional_min(self) -> float:
        """The optional modules' minutes (their core and lab): off the one-day core path."""
        return sum(m.minutes for m in self.modules if m.optional)

    @property
    def deep_dives_min(self) -> float:
        return sum(d.minutes for m in self.modules for d in m.deep_dives)

    @property
    def stretch_min(self) -> float:
        """The stretch tasks' minutes: off the core path, like the deep dives."""
        return sum(t.minutes for m in self.modules if m.lab for t in m.lab.stretch)

    @property
    def fits(self) -> bool:
        return self.core_path_min <= WORKSHOP_MINUTES

    @property
    def not_measured(self) -> int:
        """Code cells on the core path (a module's core and its lab, optional modules too) without a measured
        run time."""
        return sum(m.core.not_measured + (m.lab.not_measured if m.lab else 0) for m in self.modules)

    def machines(self) -> list[str]:
        """The machines the times used were measured on, one line each (normally one)."""
        names = {m.notebook for m in self.modules} | {m.lab.notebook for m in self.modules if m.lab}
        found = [describe(t.measured_on) for n, t in sorted(self.measurements.items()) if n in names]
        return sorted(set(found))

    def errors(self) -> list[str]:
        names = {m.notebook for m in self.modules} | {m.lab.notebook for m in self.modules if m.lab}
        return [t.error for n, t in sorted(self.measurements.items()) if n in names and t.error]

    def to_json(self) -> dict[str, Any]:
        modules = []
        for m in self.modules:
            row = asdict(m)
            row["core"]["minutes"] = m.core.minutes
            row["deep_dives"] = [{**asdict(d), "minutes": d.minutes} for d in m.deep_dives]
            if m.lab is not None:
                row["lab"]["minutes"] = m.lab.minutes
                row["lab"]["stretch"] = [{**asdict(t), "minutes": t.minutes} for t in m.lab.stretch]
            modules.append({**row, "minutes": m.minutes})
        return {
            "reading_wpm": self.wpm,
            "lab_minutes_per_task": self.lab_minutes_per_task,
            "times_file": self.times_file,
            "measured_on": self.machines(),
            "modules": modules,
            "core_path_min": self.core_path_min,
            "deep_dives_min": self.deep_dives_min,
            "stretch_min": self.stretch_min,
            "optional_min": self.optional_min,
            "workshop_min": WORKSHOP_MINUTES,
            "fits": self.fits,
            "not_measured": self.not_measured,
            "errors": self.errors(),
        }


def describe(measured_on: Mapping[str, Any]) -> str:
    """``2 cores, 7.8 GiB, Linux 6.1.0, YYYY-MM-DD``: the facts of the machine a run was measured on, and its date."""
    if not measured_on:
        return "an unknown machine"
    parts = [
        f"{measured_on.get('cores', '?')} cores",
        f"{measured_on.get('memory_gib', '?')} GiB",
        str(measured_on.get("os", "?")),
        str(measured_on.get("date", "?"))[:10],
    ]
    if backend := measured_on.get("backend"):
        parts.append(f"{backend} backend")
    return ", ".join(parts)


def course_time(
    root: Path,
    notebooks: list[Path] | None = None,
    *,
    times_file: Path | None = None,
    wpm: float = READING_WPM,
    lab_minutes_per_task: float = LAB_MINUTES_PER_TASK,
) -> CourseTime:
    """The course's time from its notebooks and the times file (``notebooks``: all module notebooks)."""
    from eoslab.course._reading import module_notebooks

    times_path = times_file or root / TIMES_FILE
    times = read_times(times_path)
    paths = notebooks if notebooks is not None else module_notebooks(root)
    modules = tuple(module_time(root, p, times, wpm=wpm, lab_minutes_per_task=lab_minutes_per_task) for p in paths)
    return CourseTime(
        modules=modules,
        wpm=wpm,
        lab_minutes_per_task=lab_minutes_per_task,
        times_file=key(root, times_path),
        measurements=times,
    )
