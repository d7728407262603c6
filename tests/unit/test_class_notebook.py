"""The instructor's class notebook (instructor/class_runs.ipynb) under nbval, as `make test` runs notebooks,
on a generated class of submissions: `eoslab submit` archives over synthetic runs, one outlier machine, a
learner with two runs and one without any. And the same notebook on an empty class folder: it stops at its
Setup cell with the sentence that says what to do, before any JVM starts.

In the unit tier (the path says so) with the ``jvm`` mark: it needs Spark, not a Kafka cluster. pytest runs
the notebook in a child process with ``--noconftest``, so the suite's hooks (tiers, worker clusters) stay out
of it, and the kernel imports the kit of this checkout (PYTHONPATH)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _class_of_runs import write_class
from _classroom import no_jvm
from _free_ports import free_offset

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "instructor" / "class_runs.ipynb"
CELL_TIMEOUT = 120
"""As `make test` gives every notebook cell (the Makefile's SUITE)."""

pytestmark = pytest.mark.jvm


def _nbval(klass: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", str(NOTEBOOK), "--nbval-lax", "--nbval-current-env"]
    cmd += [f"--nbval-cell-timeout={CELL_TIMEOUT}", "--noconftest", "-p", "no:cacheprovider", "-q", "--no-header"]
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "EOSLAB_CLASS": str(klass), **env}
    environ["EOSLAB_PORT_OFFSET"] = str(free_offset())  # no cluster there, whatever runs beside the unit tier
    return subprocess.run(cmd, cwd=cwd, env=environ, capture_output=True, text=True, timeout=280)


def _code_cells() -> int:
    return sum(1 for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code")


def test_the_class_notebook_runs_on_a_generated_class_of_submissions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_jvm(monkeypatch)
    learners = {"ana": {}, "bo": {"runs": 2}, "cy": {}, "dee": {"overheads": {"txn_100ms": 0.30}}, "eve": {"runs": 0}}
    klass = write_class(tmp_path, monkeypatch, learners, rounds=4, noise=0.02)
    proc = _nbval(klass, tmp_path, EOSLAB_CLASS_LEARNER="dee")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert f"{_code_cells()} passed" in proc.stdout
    unpacked = sorted(p.name.rsplit("-", 1)[0] for p in (klass / ".unpacked").iterdir())
    assert unpacked == ["ana", "bo", "cy", "dee", "eve"]  # the notebook read THIS class, every archive of it


def test_the_class_notebook_on_an_empty_folder_says_what_to_do(tmp_path: Path) -> None:
    empty = tmp_path / "class"
    empty.mkdir()
    proc = _nbval(empty, tmp_path)
    assert proc.returncode == 1
    sentence = f"GradingError: {empty} has no submissions: put each learner's submission-*.zip (from `eoslab submit`)"
    failures = proc.stdout.split("::Cell ")
    assert failures[1].startswith("1 ") and sentence in failures[1]  # the Setup cell, after the parameters passed
    assert "The cluster is down" not in proc.stdout  # no cluster is needed, and none is blamed
