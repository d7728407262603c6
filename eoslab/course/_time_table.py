"""``eoslab course time`` as a reader sees it: one row per module on the core path, its total against a
one-day workshop, the deep dives and the labs' stretch tasks apart, and what was not measured."""

from __future__ import annotations

import re
from pathlib import Path

from eoslab.course._timing import WORKSHOP_MINUTES, CourseTime, ModuleTime, StretchTask, Timed

_CORE = ("module", "words", "read", "cells", "run", "lab tasks", "lab", "total", "not measured")
_DEEP = ("module", "deep dive", "words", "read", "cells", "run", "total", "not measured")
_STRETCH = ("module", "stretch task", "task", "cells", "run", "total", "not measured")


def _name(m: ModuleTime) -> str:
    topic = re.sub(r"^\d\d_", "", Path(m.notebook).stem).replace("_", " ")
    return f"{m.module} {topic}" + (" (optional)" if m.optional else "")


def _min(value: float) -> str:
    return f"{value:.1f}"


def _hours(minutes: float) -> str:
    whole = round(minutes)
    return f"{whole // 60} h {whole % 60:02d} min"


def _core_row(m: ModuleTime) -> list[str]:
    lab = m.lab
    missing = m.core.not_measured + (lab.not_measured if lab else 0)
    return [
        _name(m),
        str(m.core.words),
        _min(m.core.reading_min),
        str(m.core.code_cells),
        _min(m.core.run_min),
        str(lab.tasks) if lab else "—",
        _min(lab.minutes) if lab else "—",
        _min(m.minutes),
        str(missing) if missing else "",
    ]


def _deep_row(m: ModuleTime, d: Timed) -> list[str]:
    title = re.sub(r"^Deep dive\s*[—-]\s*", "", d.title)
    return [
        m.module,
        title,
        str(d.words),
        _min(d.reading_min),
        str(d.code_cells),
        _min(d.run_min),
        _min(d.minutes),
        str(d.not_measured) if d.not_measured else "",
    ]


def _stretch_row(m: ModuleTime, t: StretchTask) -> list[str]:
    return [
        m.module,
        f"{t.task} {t.title}",
        _min(t.task_min),
        str(t.code_cells),
        _min(t.run_min),
        _min(t.minutes),
        str(t.not_measured) if t.not_measured else "",
    ]


def _stretch_lines(course: CourseTime) -> list[str]:
    """The labs' stretch tasks, apart: graded, but left for after a one-day workshop."""
    rows = [_stretch_row(m, t) for m in course.modules if m.lab for t in m.lab.stretch]
    if not rows:
        return []
    return [
        "",
        "Stretch tasks, apart (graded, optional in a one-day workshop, not in the total):",
        *_grid(_STRETCH, rows, 2),
        f"Stretch tasks in all: {_min(course.stretch_min)} min ({_hours(course.stretch_min)}).",
    ]


def _grid(header: tuple[str, ...], rows: list[list[str]], left: int) -> list[str]:
    """Columns sized to their widest cell; the first ``left`` columns are text (left-aligned)."""
    widths = [max(len(r[i]) for r in [list(header), *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        out = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(out).rstrip()

    return [line(list(header)), *(line(r) for r in rows)]


def _apart_lines(course: CourseTime) -> list[str]:
    """What is not in the core path: the optional modules, then the deep dives and their sum."""
    lines = [
        f"Module {_name(m)}, apart (not in the core path): {_min(m.minutes)} min; {m.optional}."
        for m in course.modules
        if m.optional
    ]
    deep = [_deep_row(m, d) for m in course.modules for d in m.deep_dives]
    if deep:
        lines += ["", "Deep dives, apart (optional, not in the total):", *_grid(_DEEP, deep, 2)]
        lines.append(f"Deep dives in all: {_min(course.deep_dives_min)} min ({_hours(course.deep_dives_min)}).")
    return lines


def time_table(course: CourseTime) -> str:
    """The whole answer, in minutes: reading + run = core; core tasks + run = lab; core + lab = a module's total."""
    lines = [
        f"Core path: reading at {course.wpm:g} words/min, {course.lab_minutes_per_task:g} min per graded lab task, "
        f"cells' run times from {course.times_file}.",
    ]
    machines = course.machines()
    lines.append("Measured on: " + ("; ".join(machines) if machines else "nothing measured yet") + ".")
    lines += ["", *_grid(_CORE, [_core_row(m) for m in course.modules], 1)]
    total = course.core_path_min
    verdict = (
        f"fits a one-day workshop ({WORKSHOP_MINUTES // 60} h)"
        if course.fits
        else f"does NOT fit a one-day workshop ({WORKSHOP_MINUTES // 60} h): {_min(total - WORKSHOP_MINUTES)} min over"
    )
    lines += ["", f"Core path with labs: {_min(total)} min ({_hours(total)}): {verdict}."]
    lines += _apart_lines(course)
    lines += _stretch_lines(course)
    if course.not_measured:
        lines += [
            "",
            f"{course.not_measured} code cells on the core path have no measured run time (counted as 0 min): "
            "measure them on the running cluster with `eoslab course time --measure --labs`.",
        ]
    lines += [f"Note: {e}" for e in course.errors()]
    return "\n".join(lines)
