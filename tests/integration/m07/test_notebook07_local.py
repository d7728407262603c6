"""Module 07 (exactly-once in production) under nbval on the local backend.

The course tier runs every notebook on the docker backend (the containerized cluster); module 07's rows kill
processors, fence instances and read over open transactions, which differ most between six JVMs on loopback and
six containers, so it also runs here, in the cluster tier, on this worker's local cluster: the same nbval options
and cell guards as the course tier (tests/suite.py NBVAL, the root conftest), in a pytest of its own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.suite import NBVAL

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = "notebooks/07_in_production.ipynb"

pytestmark = [pytest.mark.cluster, pytest.mark.destructive]


def _code_cells() -> int:
    cells = json.loads((ROOT / NOTEBOOK).read_text())["cells"]
    return sum(c["cell_type"] == "code" for c in cells)


# Its own guard: the notebook's cells each under their nbval guard (200-300 s together on the quiet 2-core machine).
@pytest.mark.timeout(1500)
def test_module_07_runs_under_nbval_on_the_local_backend(cluster) -> None:
    assert cluster.backend.name == "local"
    # A plain pytest on this worker's cluster: none of the outer run's xdist or pytest variables, its offset kept.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EOSLAB_TEST_WORKER"))}
    argv = [sys.executable, "-m", "pytest", NOTEBOOK, *NBVAL, "-p", "no:cacheprovider", "-p", "no:xdist", "-q"]
    proc = subprocess.run(argv, cwd=ROOT, env={**env, "EOSLAB_BACKEND": "local"}, capture_output=True, text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    passed = re.search(r"(\d+) passed", out)
    assert passed is not None and int(passed.group(1)) == _code_cells(), out[-2000:]
    assert not re.search(r"\d+ (failed|skipped|error)", out), out[-2000:]
