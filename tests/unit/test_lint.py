"""House tooling as tests: ruff format (the layout), ruff (lint) and mypy (type hints) are clean, over the
package (mypy: strict) and its tests, conftest and tools (mypy: every body checked; pyproject.toml says how).

Pinned versions (pyproject.toml), so a release of a tool cannot turn the suite red on its own.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


TREE = ["eoslab", "tests", "conftest.py", "tools"]

pytestmark = pytest.mark.lint


@pytest.mark.parametrize(
    "tool,args",
    [("ruff", ["format", "--check", *TREE]), ("ruff", ["check", *TREE]), ("mypy", TREE)],
    ids=["ruff-format", "ruff-check", "mypy"],
)
def test_tool_is_clean(tool, args):
    exe = shutil.which(tool, path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail(f"{tool} is not installed: run `make setup` (it installs the dev extras)")
    proc = subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
