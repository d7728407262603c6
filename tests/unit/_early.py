"""A test's child process started as soon as the session has collected, its result handed to the test later.

Why: the unit tier is one pytest process (two in `make test`: its Spark tests beside the rest) on a 2-core machine,
and a few of its tests spend most of their time waiting on a child (the class notebook under nbval, a Spark
session's JVM, mypy and ruff) while the other core idles. Such a test says how its child starts with the mark
``early(start=...)``; tests/unit/conftest.py starts the children of the selected tests right after collection and
runs those tests last in the tier, so that the children run beside the in-process tests. Each test then waits for
ITS child (:meth:`Started.result`) and asserts what it asserted when it ran the child itself: the same argv,
environment, folder and timeout (counted from the child's start, as ``subprocess.run`` counts it). A deselected
test's child never starts (`make unit` leaves them all out); one still running at the end of the session (its test
did not run: ``-x``, Ctrl-C) is killed with what it started.

The children run niced (:data:`NICE`): they take the core the main process leaves idle, not the main process's,
whose in-process Spark tests are the tier's critical path.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

import pytest

NICE = 10
"""The children's niceness above the main process's: under contention it gets ~10 times their CPU share (none
when the main process is niced 10 or more already: 19 is the most)."""

Start = Callable[..., "Child"]
"""``start(folder, **params)``: starts a test's child; ``folder`` is the test's own tmp folder, ``params`` its
parametrization (``item.callspec.params``)."""


class Child:
    """A child process started now, in a process group of its own (so that a kill reaches its kernel or JVM too),
    its output kept in files: a pipe that nobody reads until the test runs would stall it once full."""

    def __init__(
        self, argv: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float | None
    ) -> None:
        self._out: IO[str] = tempfile.TemporaryFile("w+")
        self._err: IO[str] = tempfile.TemporaryFile("w+")
        self._popen = subprocess.Popen(
            list(argv), cwd=cwd, env=env, stdout=self._out, stderr=self._err, start_new_session=True
        )
        os.setpriority(os.PRIO_PGRP, self._popen.pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))
        self.timeout = timeout
        self._deadline = None if timeout is None else time.monotonic() + timeout

    def result(self) -> subprocess.CompletedProcess[str]:
        """What ``subprocess.run(argv, capture_output=True, text=True, timeout=...)`` returns; past the timeout,
        the child is killed and ``TimeoutExpired`` raised, as there."""
        left = None if self._deadline is None else max(0.0, self._deadline - time.monotonic())
        try:
            code = self._popen.wait(left)
        except subprocess.TimeoutExpired:
            assert self.timeout is not None  # a child without a timeout is waited for until it ends
            self.kill()
            raise subprocess.TimeoutExpired(self._popen.args, self.timeout, *self._output()) from None
        return subprocess.CompletedProcess(self._popen.args, code, *self._output())

    def _output(self) -> tuple[str, str]:
        return _read(self._out), _read(self._err)

    def kill(self) -> None:
        """Kill the child and its process group (by its pid) if it still runs."""
        if self._popen.poll() is None:
            os.killpg(self._popen.pid, signal.SIGKILL)
            self._popen.wait()


def _read(file: IO[str]) -> str:
    with file:
        file.seek(0)
        return file.read()


@dataclass
class Started:
    """A test's child as started at collection: the folder it was given, and the child or what starting it raised
    (a ``pytest.skip``/``pytest.fail`` included), raised again in the test, where it belongs."""

    folder: Path
    child: Child | None = None
    error: BaseException | None = None

    def result(self) -> subprocess.CompletedProcess[str]:
        if self.child is None:
            assert self.error is not None
            raise self.error
        return self.child.result()


_STARTED: dict[str, Started] = {}


def _start_of(item: pytest.Item) -> Start | None:
    mark = item.get_closest_marker("early")
    return None if mark is None else cast(Start, mark.kwargs["start"])


def has_child(item: pytest.Item) -> bool:
    return _start_of(item) is not None


def start(item: pytest.Item, factory: pytest.TempPathFactory) -> Started:
    """Start ``item``'s child now (once), in a folder named as its ``tmp_path`` would be."""
    if item.nodeid not in _STARTED:
        begin = _start_of(item)
        assert begin is not None, f"{item.nodeid} has no early child: mark it pytest.mark.early(start=...)"
        folder = factory.mktemp(re.sub(r"[\W]", "_", item.name)[:30], numbered=True)
        started = Started(folder)
        spec = getattr(item, "callspec", None)
        try:
            started.child = begin(folder, **(spec.params if spec else {}))
        except (Exception, pytest.skip.Exception, pytest.fail.Exception) as exc:  # noqa: BLE001  # the test raises it
            started.error = exc
        _STARTED[item.nodeid] = started
    return _STARTED[item.nodeid]


def kill_all() -> None:
    """Kill every child still running (its test did not wait for it)."""
    for started in _STARTED.values():
        if started.child is not None:
            started.child.kill()
