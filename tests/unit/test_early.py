"""The unit tier's early children (_early.py): a child started now gives its test, later, what
``subprocess.run`` would have given it; a timeout counts from the child's start and kills what the child
started too; what starting a child raised is raised in its test."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import _early
import psutil
import pytest

from eoslab._wait import wait_until

LOUD = """
import sys
from pathlib import Path
sys.stdout.write("x" * 300_000 + "\\r\\n")  # more than a pipe holds: a child writing to one would block here
sys.stderr.write("and on stderr\\n")
Path(sys.argv[1]).touch()
sys.exit(3)
"""

SPAWNER = """
import subprocess, sys, time
from pathlib import Path
Path(sys.argv[1]).write_text(str(subprocess.Popen(["sleep", "60"]).pid))
time.sleep(60)
"""


def test_a_child_gives_what_subprocess_run_gives_without_being_read(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", LOUD, str(tmp_path / "done")]
    child = _early.Child(argv, timeout=60)
    wait_until(lambda: (tmp_path / "done").exists(), timeout=30, what="the child's end, nobody reading its output")
    got = child.result()
    want = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert (got.args, got.returncode, got.stdout, got.stderr) == (want.args, 3, want.stdout, want.stderr)
    assert got.stdout.endswith("x\n")  # text mode, as subprocess.run's


def _gone(pid: int) -> bool:
    """No process ``pid`` any more, or only its zombie (its new parent reaps it when it does)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_timeout_counts_from_the_start_and_kills_what_the_child_started(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    child = _early.Child([sys.executable, "-c", SPAWNER, str(pid)], timeout=2)
    grandchild = wait_until(lambda: pid.exists() and pid.read_text(), timeout=30, what="the grandchild's pid")
    time.sleep(2.1)
    asked = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as timed_out:
        child.result()
    assert time.monotonic() - asked < 2  # its 2 s had passed before the test asked: no wait for another 2
    assert timed_out.value.timeout == 2
    wait_until(lambda: _gone(int(grandchild)), timeout=10, what=f"the end of the child's own child {grandchild}")


def test_what_starting_a_child_raised_is_raised_in_its_test_and_it_starts_once(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    calls: list[Path] = []

    def refuse(folder: Path) -> _early.Child:
        calls.append(folder)
        pytest.fail("no tool here: install it")

    mark = pytest.mark.early(start=refuse).mark
    named = {"nodeid": "t.py::test_refused[a b]", "name": "test_refused[a b]"}
    item = cast(Any, SimpleNamespace(**named, get_closest_marker=lambda name: mark if name == "early" else None))
    started = _early.start(item, tmp_path_factory)
    assert _early.start(item, tmp_path_factory) is started and calls == [started.folder]
    assert started.folder.name.startswith("test_refused_a_b_") and started.folder.is_dir()
    with pytest.raises(pytest.fail.Exception, match="no tool here: install it"):
        started.result()
