"""The course's files as committed: labs generated from solutions, notebooks without outputs."""

import json
from pathlib import Path

import pytest

from eoslab.grading import generate_labs, graded_cells

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p for d in ("notebooks", "labs", "solutions") for p in (ROOT / d).glob("*.ipynb"))


def test_labs_are_what_the_solutions_generate():
    changed = generate_labs(ROOT, check=True)
    assert changed == [], f"run `eoslab labs`: {changed} differ from solutions/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    with_outputs = [c.get("id") for c in nb["cells"] if c["cell_type"] == "code" and c.get("outputs")]
    assert with_outputs == [], f"{path.name}: strip outputs (make strip)"


@pytest.mark.parametrize("path", sorted((ROOT / "labs").glob("lab*.ipynb")), ids=lambda p: p.name)
def test_every_lab_has_graded_cells_with_unique_ids(path):
    cells = graded_cells(json.loads(path.read_text()))
    assert cells, f"{path.name} has no graded cells"
    assert len({c["cell_id"] for c in cells}) == len(cells)
    assert len({c["task"] for c in cells}) == len(cells)


def test_every_test_module_has_its_own_name():
    """tests/ has no __init__.py: pytest imports each test file by its basename, so two files of one name
    (tests/unit/x.py and tests/integration/x.py) stop `make test` at collection, though each half passes."""
    import collections
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    names = collections.Counter(p.name for p in tests.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []
