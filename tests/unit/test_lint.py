"""House tooling as tests: ruff (lint) and mypy (type hints) are clean."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "tool,args", [("ruff", ["check", "eoslab", "tests", "conftest.py", "tools"]), ("mypy", ["eoslab"])]
)
def test_tool_is_clean(tool, args):
    exe = shutil.which(tool, path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.fail(f"{tool} is not installed: run `make setup` (it installs the dev extras)")
    proc = subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
