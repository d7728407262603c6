"""House tooling as tests: ruff format (the layout), ruff (lint) and mypy (type hints) are clean, over the
package (mypy: strict) and its tests, conftest and tools (mypy: every body checked; pyproject.toml says how).

Pinned versions (pyproject.toml), so a release of a tool cannot turn the suite red on its own.
"""

import shutil
import sys
from pathlib import Path

import _early
import pytest

ROOT = Path(__file__).resolve().parents[2]


TREE = ["eoslab", "examples", "tests", "conftest.py", "tools"]

pytestmark = pytest.mark.lint


def _tool(folder: Path, tool: str, args: list[str]) -> _early.Child:
    exe = shutil.which(tool, path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail(f"{tool} is not installed: run `make setup` (it installs the dev extras)")
    return _early.Child([exe, *args], cwd=ROOT, timeout=None)


@pytest.mark.parametrize(
    "tool,args",
    [("ruff", ["format", "--check", *TREE]), ("ruff", ["check", *TREE]), ("mypy", TREE)],
    ids=["ruff-format", "ruff-check", "mypy"],
)
@pytest.mark.early(start=_tool)  # started at collection: mypy's ~12 s run beside the tier's other tests (_early.py)
def test_tool_is_clean(tool, args, early_child):
    proc = early_child.result()
    assert proc.returncode == 0, proc.stdout + proc.stderr
