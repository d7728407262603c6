"""A child process the kit talks to in lines: one command per line on its stdin, one JSON answer per
line on its stdout, its own log on stderr (kept, never printed under a notebook cell).

The zombie producer (a librdkafka child, ``eoslab.faults``) and the Java 4.4 producer (a child JVM,
``eoslab.java_client``) are both such children. What they share lives here once: the pipes and the two
reader threads, the pid file ``eoslab heal`` ends them by, waiting for an answer with one sentence when
none comes, and freezing (SIGSTOP) and thawing (SIGCONT) — the zombie fault.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any, TypeVar

from eoslab import _procs
from eoslab.errors import ClientError

C = TypeVar("C", bound="LineChild")

LOG_LINES = 2000
"""How many of the child's log lines are kept (the last ones)."""


class LineChild:
    """The plumbing of a line-protocol child. Subclasses say how to start it and what a command is.

    ``what`` names the child in errors ("The zombie producer 'z1'"); ``error`` is the exception class a
    caller of the subclass expects (a subclass of :class:`eoslab.errors.EoslabError`).
    """

    what = "The child process"
    error: type[Exception] = ClientError

    def __init__(self, name: str) -> None:
        self.name = name
        self.proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.log: collections.deque[str] = collections.deque(maxlen=LOG_LINES)
        self.frozen = False
        self._log_reader: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _pid_file(self) -> Path:
        raise NotImplementedError

    def _spawn(self, argv: list[str]) -> subprocess.Popen[str]:
        """Start the child in its own session (a Ctrl-C in the notebook is not its), write its pid file,
        and start the threads that read its answers and its log."""
        self._lines = queue.Queue()
        self.proc = subprocess.Popen(
            argv,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            bufsize=1,
            start_new_session=True,
        )
        _procs.write_pid(self._pid_file(), self.proc.pid)
        _procs.adopt(self.proc.pid)
        threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
        self._log_reader = threading.Thread(target=self._read_log, args=(self.proc,), daemon=True)
        self._log_reader.start()
        return self.proc

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _read_log(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.log.append(line.rstrip())

    def _tail(self) -> str:
        return " | ".join(list(self.log)[-3:])

    def _write(self, line: str) -> None:
        if self.proc is None or self.proc.stdin is None:
            raise self.error(f"{self.what} {self.name!r} is not running: call start() first.")
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _answer(self, timeout: float) -> dict[str, Any]:
        """The answer to the oldest command not yet answered (a frozen child answers once thawed)."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            state = "frozen (SIGSTOP)" if self.frozen else "running"
            hint = (
                ": thaw() it first." if self.frozen else (f"; its last log lines: {self._tail()}" if self.log else ".")
            )
            raise self.error(f"{self.what} {self.name!r} ({state}) did not answer within {timeout:g} s{hint}") from None
        if line is None:
            if self._log_reader is not None:  # its last words are on stderr: read them before quoting them
                self._log_reader.join(timeout=2.0)
            code = self.proc.wait(timeout=_procs.KILL_WAIT) if self.proc else None
            raise self.error(f"{self.what} {self.name!r} exited (code {code}): {self._tail() or 'no log'}.")
        answer: dict[str, Any] = json.loads(line)
        return answer

    # -- the fault: freeze is inject, thaw is heal --------------------------------------------
    def freeze(self: C) -> C:
        if self.proc is not None:
            os.kill(self.proc.pid, signal.SIGSTOP)
            self.frozen = True
        return self

    def thaw(self) -> None:
        if self.proc is not None and self.frozen:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.frozen = False

    def _end(self) -> None:
        """SIGKILL the child (a stopped one dies too), reap it, remove its pid file."""
        proc = self.proc
        if proc is None:
            return
        self._pid_file().unlink(missing_ok=True)
        self.proc = None
        _procs.kill(p for p in [_procs.process(proc.pid)] if p is not None)
        proc.wait(timeout=_procs.KILL_WAIT)  # reaped already (or now): sets returncode
        _procs.release(proc.pid)
        self.frozen = False
