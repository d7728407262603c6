"""A client fault: a producer in a child process that can be frozen (SIGSTOP) and thawed (SIGCONT).

Why a process: fencing is about a producer that is alive but silent (a long GC
pause, a stuck VM) while a successor with the same ``transactional.id`` takes
over; thawed, the zombie must be fenced. A thread cannot be frozen alone.
The child's pid file goes to ``eoslab._paths.clients_dir()``, so ``eoslab heal``
ends it even if the notebook that started it is gone.

The child obeys one JSON command per line on stdin (``init_transactions``,
``begin``, ``produce``, ``flush``, ``commit``, ``abort``, ``exit``) and answers
one JSON line each; a frozen child answers after it is thawed. librdkafka's own
log lines (on the child's stderr, e.g. "Fatal transaction error") are kept in
``zombie.log``, never printed under a notebook cell.
"""

from __future__ import annotations

import collections
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from eoslab import _procs
from eoslab._paths import clients_dir
from eoslab.faults._errors import FaultError

CALL_TIMEOUT = 60.0  # above the demo's transaction.timeout and message.timeout, so Kafka's answer comes first
CHILD_MODULE = "eoslab.faults._zombie_child"
"""The child's command line holds this (``python -m ...``): :func:`end_zombies` signals nothing else."""


def end_zombies() -> list[int]:
    """End every zombie producer a demo started (and maybe left frozen), even from a dead notebook."""
    return _procs.end_pid_files(clients_dir(), expect=CHILD_MODULE)


class ZombieProducer:
    """``with ZombieProducer(conf) as z: z.call("init_transactions"); z.freeze(); ...``."""

    def __init__(self, config: dict[str, Any], name: str = "zombie") -> None:
        self.config, self.name = dict(config), name
        self.proc: subprocess.Popen[str] | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.log: collections.deque[str] = collections.deque(maxlen=2000)  # librdkafka's lines from the child
        self.frozen = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def _pid_file(self) -> Path:
        return clients_dir() / f"{self.name}-{self.pid}.pid"

    def start(self) -> ZombieProducer:
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", CHILD_MODULE],
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=1,
                start_new_session=True,
            )
            _procs.write_pid(self._pid_file(), self.proc.pid)
            threading.Thread(target=self._read, args=(self.proc,), daemon=True).start()
            threading.Thread(target=self._read_log, args=(self.proc,), daemon=True).start()
            self.call("config", config=self.config)
        return self

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _read_log(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.log.append(line.rstrip())

    def send(self, op: str, **args: Any) -> None:
        """Queue a command without waiting (a frozen zombie reads it when thawed)."""
        if self.proc is None or self.proc.stdin is None:
            raise FaultError(f"The zombie producer {self.name!r} is not running: call start() first.")
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()

    def result(self, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        """The answer to the oldest command not yet answered."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            state = "frozen (SIGSTOP)" if self.frozen else "running"
            raise FaultError(
                f"The zombie producer {self.name!r} ({state}) did not answer within {timeout:g} s"
                + (": thaw() it first." if self.frozen else ".")
            ) from None
        if line is None:
            raise FaultError(f"The zombie producer {self.name!r} exited (code {self.proc and self.proc.poll()}).")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, op: str, timeout: float = CALL_TIMEOUT, **args: Any) -> dict[str, Any]:
        """Run a command and return its answer: ``{"ok": bool, ...}``; errors carry Kafka's error name."""
        self.send(op, **args)
        return self.result(timeout)

    # -- the fault: freeze is inject, thaw is heal --------------------------------
    def freeze(self) -> ZombieProducer:
        if self.proc is not None:
            os.kill(self.proc.pid, signal.SIGSTOP)
            self.frozen = True
        return self

    def thaw(self) -> None:
        if self.proc is not None and self.frozen:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.frozen = False

    inject, heal = freeze, thaw

    def stop(self) -> None:
        """End the child (thawed first so it can die), remove its pid file."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        self.proc = proc
        self._pid_file().unlink(missing_ok=True)
        self.proc = None
        _procs.kill(p for p in [_procs.process(proc.pid)] if p is not None)
        proc.wait(timeout=_procs.KILL_WAIT)  # reaped already (or now): sets returncode
        self.frozen = False

    def __enter__(self) -> ZombieProducer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
