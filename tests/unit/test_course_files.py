"""The course's files as committed: labs generated from solutions, notebooks without outputs."""

import json
import re
from pathlib import Path

import pytest

from eoslab.classroom import generate_labs
from eoslab.labcheck import graded_cells

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p for d in ("notebooks", "labs", "solutions", "instructor") for p in (ROOT / d).glob("*.ipynb"))


def test_labs_are_what_the_solutions_generate() -> None:
    changed = generate_labs(ROOT, check=True)
    assert changed == [], f"run `eoslab labs`: {changed} differ from solutions/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_without_outputs(path: Path) -> None:
    nb = json.loads(path.read_text())
    with_outputs = [c.get("id") for c in nb["cells"] if c["cell_type"] == "code" and c.get("outputs")]
    assert with_outputs == [], f"{path.name}: strip outputs (make strip)"


@pytest.mark.parametrize("path", sorted((ROOT / "labs").glob("lab*.ipynb")), ids=lambda p: p.name)
def test_every_lab_has_graded_cells_with_unique_ids(path: Path) -> None:
    cells = graded_cells(json.loads(path.read_text()))
    assert cells, f"{path.name} has no graded cells"
    assert len({c["cell_id"] for c in cells}) == len(cells)
    assert len({c["task"] for c in cells}) == len(cells)


def test_every_test_module_has_its_own_name() -> None:
    """tests/ has no __init__.py: pytest imports each test file by its basename, so two files of one name
    (tests/unit/x.py and tests/integration/x.py) stop `make test` at collection, though each half passes."""
    import collections
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    names = collections.Counter(p.name for p in tests.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []


# The course cites only what a learner can open (a KIP, Kafka's docs or source, a book by chapter, a public
# post by title); the private material it was first drafted from is not one of those (issue 23).
PRIVATE_SOURCE = re.compile(r"\bsource\s+0\d|\bthe\s+book\s+this\s+course\s+draws\s+on\b", re.IGNORECASE)
# Code cells are not edited while another change touches their import lines; this one still labels a row
# "source 001: ..." (notebook 04, step 3's LSO table). Strict: the test fails once the label is gone, so
# the mark goes with it.
CODE_CELLS_PENDING: dict[str, str] = {}  # notebook -> why a code cell still names a private source


def _hits(where: str, text: str) -> list[str]:
    return [f"{where}: {m.group(0)!r}" for m in PRIVATE_SOURCE.finditer(text)]


def _cells(path: Path, kind: str) -> list[tuple[str, str]]:
    nb = json.loads(path.read_text())
    return [(c.get("id", "?"), "".join(c["source"])) for c in nb["cells"] if c["cell_type"] == kind]


def _text_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return files + sorted(p for p in (ROOT / "eoslab").rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def test_the_private_source_pattern_catches_what_it_is_for() -> None:
    for text in ("Source 000's diagram", "as source\n001 says", "(source 003)", "The book this course draws on says"):
        assert PRIVATE_SOURCE.search(text), text
    for text in ("open source 0.11", "the source_001 property", "Spark's Kafka source", "a book, chapter 8"):
        assert not PRIVATE_SOURCE.search(text), text


def test_readme_docs_and_package_cite_no_private_source() -> None:
    hits: list[str] = []
    for path in _text_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:  # images and other binaries
            continue
        hits += _hits(str(path.relative_to(ROOT)), text)
    assert hits == [], "cite a KIP, Kafka's docs or source, a book by chapter or a public post instead"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_text_cites_no_private_source(path: Path) -> None:
    hits = [h for cell_id, text in _cells(path, "markdown") for h in _hits(f"{path.name} cell {cell_id}", text)]
    assert hits == [], "cite a KIP, Kafka's docs or source, a book by chapter or a public post instead"


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, marks=pytest.mark.xfail(reason=CODE_CELLS_PENDING[k], strict=True))
        if (k := str(p.relative_to(ROOT))) in CODE_CELLS_PENDING
        else p
        for p in NOTEBOOKS
    ],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_notebook_code_cites_no_private_source(path: Path) -> None:
    hits = [h for cell_id, text in _cells(path, "code") for h in _hits(f"{path.name} cell {cell_id}", text)]
    assert hits == [], "a label or comment in a code cell names a private source"
