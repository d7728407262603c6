"""What a learner reads and runs in a notebook, split into its core path and its deep dives.

A deep dive starts at a markdown cell whose first line is a ``Deep dive`` heading and ends with the
markdown cell that holds the line ``End of deep dive.`` (both cells belong to it): that is how the
course marks what a learner may skip (tests/unit/test_course_shape.py checks the marks). Everything
else is the core path. Words are counted as a reader meets them: a link counts its text, not its
address; HTML tags (the fold-out answers) count nothing; a token counts when it holds a letter or a
digit, so a table's ``|`` and ``---`` and a lone dash do not.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eoslab.errors import DataError

DEEP_DIVE = re.compile(r"^#{1,6} Deep dive\b")
"""The first line of a deep dive's heading cell (``### Deep dive — <topic> (optional: ...)``)."""

END_OF_DEEP_DIVE = re.compile(r"^\s*\*?End of deep dive\.\*?\s*$", re.MULTILINE)
"""The line that closes a deep dive (``*End of deep dive.*``)."""

TASK_HEADING = re.compile(r"^#{1,6} Task\b")
"""The first line of a lab task's heading cell (``## Task 3 — who leads next? (1 point)``)."""

MODULE_GLOB = "[0-9][0-9]_*.ipynb"
"""The course's module notebooks under ``notebooks/`` (not the index, not the glossary)."""

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]*>")
_WORDLIKE = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class Stretch:
    """Cells read and run together: a module's core path, or one of its deep dives.

    ``cells`` are the ids of its code cells that run (an empty code cell runs nothing).
    """

    title: str
    words: int
    cells: tuple[str, ...]


def count_words(markdown: str) -> int:
    """The words a reader reads in a markdown cell's source (see the module's docstring)."""
    text = _TAG.sub(" ", _LINK.sub(r"\1", markdown))
    return sum(1 for token in text.split() if _WORDLIKE.search(token))


def read_notebook(path: Path) -> dict[str, Any]:
    """A notebook's JSON, or one sentence saying why it cannot be read."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such notebook; give the path of an .ipynb file.") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path} is not a notebook the kit can read ({exc}); give an .ipynb file.") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise DataError(f"{path} is not a notebook (no list of cells); give an .ipynb file.")
    return nb


def source(cell: dict[str, Any]) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def cell_id(cell: dict[str, Any], index: int) -> str:
    """A cell's id (nbformat 4.5); a notebook written before ids existed gets its cell's position."""
    return str(cell.get("id") or f"cell-{index}")


def runs(cell: dict[str, Any]) -> bool:
    """True for a code cell a kernel executes (nbclient skips an empty one)."""
    return cell.get("cell_type") == "code" and bool(source(cell).strip())


def split(nb: dict[str, Any], name: str) -> tuple[Stretch, list[Stretch]]:
    """The core path and the deep dives, in order; ``name`` names the notebook in an error."""
    core_words, core_cells = 0, list[str]()
    dives: list[Stretch] = []
    title, words, cells, opened_at = "", 0, list[str](), ""
    for index, cell in enumerate(nb["cells"]):
        text = source(cell) if cell.get("cell_type") == "markdown" else ""
        if DEEP_DIVE.match(text):
            if opened_at:
                raise DataError(
                    f"{name}: the deep dive of cell {opened_at} has no 'End of deep dive.' line before the next "
                    f"one (cell {cell_id(cell, index)}); add it."
                )
            title, words, cells, opened_at = _heading(text), 0, [], cell_id(cell, index)
        if opened_at:
            words += count_words(text)
            cells += [cell_id(cell, index)] if runs(cell) else []
            if END_OF_DEEP_DIVE.search(text):
                dives.append(Stretch(title, words, tuple(cells)))
                opened_at = ""
        else:
            core_words += count_words(text)
            core_cells += [cell_id(cell, index)] if runs(cell) else []
    if opened_at:
        raise DataError(f"{name}: the deep dive of cell {opened_at} has no 'End of deep dive.' line; add it.")
    return Stretch("core", core_words, tuple(core_cells)), dives


def _heading(text: str) -> str:
    """``Deep dive — how ... (optional: ...)`` without its marks and its '(optional ...)' tail."""
    first = text.split("\n", 1)[0].lstrip("#").strip()
    return re.sub(r"\s*\(optional[^)]*\)\s*$", "", first)


def code_cells(nb: dict[str, Any]) -> tuple[str, ...]:
    """The ids of every code cell that runs: what a learner runs through in a lab."""
    return tuple(cell_id(c, i) for i, c in enumerate(nb["cells"]) if runs(c))


def task_span(nb: dict[str, Any], graded: str) -> tuple[str, tuple[str, ...]]:
    """A lab task's heading and the code cells that run from it down to its graded cell ``graded``: what a
    learner reads and runs for that task alone (a lab's Setup is shared by every task, so it is no task's).
    A graded cell without a ``Task`` heading above it, since the graded cell before it, is a span of its own."""
    heading, cells = "", list[str]()
    for index, cell in enumerate(nb["cells"]):
        text = source(cell) if cell.get("cell_type") == "markdown" else ""
        if TASK_HEADING.match(text):
            heading, cells = text, []
        cells += [cell_id(cell, index)] if runs(cell) else []
        if cell_id(cell, index) == graded:
            return heading, tuple(cells)
        if cell.get("metadata", {}).get("eoslab", {}).get("grade"):
            heading, cells = "", []
    raise DataError(f"the lab has no cell {graded}; give the id of one of its graded cells.")


def module_notebooks(root: Path) -> list[Path]:
    """The course's module notebooks, in order."""
    return sorted((root / "notebooks").glob(MODULE_GLOB))


def optional_reason(nb: dict[str, Any]) -> str | None:
    """Why a module is optional (off the one-day core path), from its notebook's metadata
    ``{"eoslab": {"optional": "<why>"}}``; ``None`` for a core module."""
    meta = nb.get("metadata", {}).get("eoslab", {})
    why = meta.get("optional") if isinstance(meta, dict) else None
    return str(why) if why else None


def module_number(path: Path) -> str:
    """``01`` for ``01_idempotent_producer.ipynb``; the file's stem for a notebook outside the course's naming."""
    return path.name[:2] if re.match(r"\d\d_", path.name) else path.stem


def lab_of(root: Path, module: str) -> Path | None:
    """The lab a module's time counts: its solution (the graded cells, the cells an instructor runs), else
    the lab itself (a learner's copy of the course has no solutions/)."""
    for folder in ("solutions", "labs"):
        found = sorted((root / folder).glob(f"lab{module}_*.ipynb"))
        if found:
            return found[0]
    return None


def key(root: Path, path: Path) -> str:
    """How the times file names a notebook: its path from the course's root, with '/'."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()
