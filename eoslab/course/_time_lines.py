"""``eoslab course time --write-notebooks``: the course states the times that were measured.

Each module notebook says how long it takes in one line, ``**Time:** teaching ~N min · lab ~M min``
(or ``· no lab``), and the index's map repeats it (tests/unit/test_course_shape.py checks that they
agree). Here both are rewritten from a :class:`CourseTime`: N is the core path (reading and run time),
M the lab; each rounded UP to 5 minutes, since a schedule that runs over is worse than one that ends
early. Only those lines change: each is swapped as a JSON string inside the file's own text, so the
notebook's formatting, its cell ids and every other byte stay as they were.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eoslab.course._timing import CourseTime, ModuleTime
from eoslab.errors import DataError

TIME_LINE = re.compile(r"^\*\*Time:\*\* teaching ~\d+ min · (?:lab ~\d+ min|no lab)$")
"""A module notebook's Time line (its Overview cell)."""

_STATED = re.compile(r"teaching ~\d+ min · (?:lab ~\d+ min|no lab)")


def rounded(minutes: float) -> int:
    """Up to the next 5 minutes, and never 0: an estimate, said as one."""
    return max(5, 5 * math.ceil(minutes / 5 - 1e-9))


def stated(m: ModuleTime) -> str:
    """``teaching ~N min · lab ~M min``: what a module's Time line and the index's map say."""
    lab = f"lab ~{rounded(m.lab.minutes)} min" if m.lab else "no lab"
    return f"teaching ~{rounded(m.core.minutes)} min · {lab}"


def write_time_lines(root: Path, course: CourseTime) -> list[Path]:
    """Rewrite each module's Time line and its row of the index's map; the files that changed.

    Refused while a core cell has no measured run time: a stated time is a measured one.
    """
    unmeasured = [m.notebook for m in course.modules if m.core.not_measured]
    if unmeasured:
        raise DataError(
            f"{', '.join(unmeasured)} {'has' if len(unmeasured) == 1 else 'have'} code cells without a measured run "
            "time: measure on the running cluster first (`eoslab course time --measure`), then write the notebooks."
        )
    changed = [root / m.notebook for m in course.modules if _restate(root / m.notebook, f"**Time:** {stated(m)}")]
    by_module = {m.module: stated(m) for m in course.modules}
    index = root / "notebooks" / "index.ipynb"
    if index.is_file() and _rewrite(index, lambda text: _map_row(text, by_module)):
        changed.append(index)
    return changed


def _restate(path: Path, line: str) -> bool:
    """Put ``line`` in place of the notebook's Time line; False if it said that already."""

    def change(text: str) -> str:
        return line if TIME_LINE.match(text) else text

    if _rewrite(path, change):
        return True
    if not any(TIME_LINE.match(t) for t in _lines(path)):
        raise DataError(f"{path} has no line '**Time:** teaching ~N min · lab ~M min'; add one to its Overview cell.")
    return False


def _map_row(text: str, by_module: dict[str, str]) -> str:
    """A row ``| 01 | ... | teaching ~30 min · lab ~55 min | ... |`` of the index's map, with its time restated."""
    row = re.match(r"^\| (\d\d) \|", text)
    if row is None or row.group(1) not in by_module:
        return text
    return _STATED.sub(by_module[row.group(1)], text, count=1)


def _lines(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [line for cell in nb["cells"] if cell["cell_type"] == "markdown" for line in _source(cell).split("\n")]


def _source(cell: dict[str, Any]) -> str:
    text = cell["source"]
    return "".join(text) if isinstance(text, list) else str(text)


def _change_cell(cell: dict[str, Any], change: Callable[[str], str]) -> list[tuple[str, str]]:
    """Apply ``change`` to each line of the cell's source (in place); the (old, new) lines that differ."""
    lines = _source(cell).splitlines(keepends=True)
    new = [change(line.rstrip("\n")) + ("\n" if line.endswith("\n") else "") for line in lines]
    cell["source"] = new if isinstance(cell["source"], list) else "".join(new)
    return [(old, line) for old, line in zip(lines, new, strict=True) if old != line]


def _rewrite(path: Path, change: Callable[[str], str]) -> bool:
    """Apply ``change`` to each line of the notebook's markdown cells; write the file if a line changed."""
    raw = path.read_text(encoding="utf-8")
    nb = json.loads(raw)
    swaps = [swap for cell in nb["cells"] if cell["cell_type"] == "markdown" for swap in _change_cell(cell, change)]
    if not swaps:
        return False
    text: str | None = raw
    for old, line in swaps:
        text = _swap(text, old, line)
    if text is None or json.loads(text) != nb:
        # The line is not found once in the file's text (the same line twice, or escaped another way):
        # write the notebook as nbformat writes it.
        text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return True


def _swap(text: str | None, old: str, new: str) -> str | None:
    """``text`` with ``old`` replaced by ``new`` where it occurs exactly once as JSON: a line that is a string of
    its own (a source kept as a list of lines), else inside a longer string (a source kept as one string)."""
    if text is None:
        return None
    for ascii_only in (False, True):
        was, now = json.dumps(old, ensure_ascii=ascii_only), json.dumps(new, ensure_ascii=ascii_only)
        for a, b in ((was, now), (was[1:-1], now[1:-1])):
            if a and text.count(a) == 1:
                return text.replace(a, b)
    return None
