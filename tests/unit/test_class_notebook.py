"""The instructor's class notebook (instructor/class_runs.ipynb) under nbval, as `make test` runs notebooks,
on a generated class of submissions: `eoslab submit` archives over synthetic runs, one outlier machine, a
learner with two runs and one without any. And the same notebook on an empty class folder: it stops at its
Setup cell with the sentence that says what to do, before any JVM starts.

In the unit tier (the path says so) with the ``jvm`` mark: it needs Spark, not a Kafka cluster. pytest runs
the notebook in a child process with ``--noconftest``, so the suite's hooks (tiers, worker clusters) stay out
of it, and the kernel imports the kit of this checkout (PYTHONPATH). Both children start at collection (_early.py): they
run beside the tier's in-process tests, and each test waits for its own."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import _early
import pytest
from _class_of_runs import write_class
from _classroom import no_jvm
from _free_ports import free_offset

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "instructor" / "class_runs.ipynb"
CELL_TIMEOUT = 120
"""As `make test` gives every notebook cell (the Makefile's SUITE)."""

pytestmark = pytest.mark.jvm


def _nbval(klass: Path, cwd: Path, **env: str) -> _early.Child:
    cmd = [sys.executable, "-m", "pytest", str(NOTEBOOK), "--nbval-lax", "--nbval-current-env"]
    cmd += [f"--nbval-cell-timeout={CELL_TIMEOUT}", "--noconftest", "-p", "no:cacheprovider", "-q", "--no-header"]
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "EOSLAB_CLASS": str(klass), **env}
    environ["EOSLAB_PORT_OFFSET"] = str(free_offset())  # no cluster there, whatever runs beside the unit tier
    return _early.Child(cmd, cwd=cwd, env=environ, timeout=280)


def _code_cells() -> int:
    return sum(1 for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code")


def _generated_class(folder: Path) -> _early.Child:
    learners = {"ana": {}, "bo": {"runs": 2}, "cy": {}, "dee": {"overheads": {"txn_100ms": 0.30}}, "eve": {"runs": 0}}
    with pytest.MonkeyPatch.context() as monkeypatch:
        no_jvm(monkeypatch)
        klass = write_class(folder, monkeypatch, learners, rounds=4, noise=0.02)
    return _nbval(klass, folder, EOSLAB_CLASS_LEARNER="dee")


@pytest.mark.early(start=_generated_class)
def test_the_class_notebook_runs_on_a_generated_class_of_submissions(early_child: _early.Started) -> None:
    proc = early_child.result()
    klass = early_child.folder / "class"
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert f"{_code_cells()} passed" in proc.stdout
    unpacked = sorted(p.name.rsplit("-", 1)[0] for p in (klass / ".unpacked").iterdir())
    assert unpacked == ["ana", "bo", "cy", "dee", "eve"]  # the notebook read THIS class, every archive of it


def _empty_class(folder: Path) -> _early.Child:
    empty = folder / "class"
    empty.mkdir()
    return _nbval(empty, folder)


@pytest.mark.early(start=_empty_class)
def test_the_class_notebook_on_an_empty_folder_says_what_to_do(early_child: _early.Started) -> None:
    proc = early_child.result()
    empty = early_child.folder / "class"
    assert proc.returncode == 1
    sentence = f"GradingError: {empty} has no submissions: put each learner's submission-*.zip (from `eoslab submit`)"
    failures = proc.stdout.split("::Cell ")
    assert failures[1].startswith("1 ") and sentence in failures[1]  # the Setup cell, after the parameters passed
    assert "The cluster is down" not in proc.stdout  # no cluster is needed, and none is blamed
