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

import json
import sys
from pathlib import Path
from typing import Any

from eoslab import _procs
from eoslab._linechild import LineChild
from eoslab._paths import clients_dir
from eoslab.faults._errors import FaultError

CALL_TIMEOUT = 60.0  # above the demo's transaction.timeout and message.timeout, so Kafka's answer comes first
CHILD_MODULE = "eoslab.faults._zombie_child"
"""The child's command line holds this (``python -m ...``): :func:`end_zombies` signals nothing else."""


def end_zombies() -> list[int]:
    """End every zombie producer a demo started (and maybe left frozen), even from a dead notebook."""
    return _procs.end_pid_files(clients_dir(), expect=CHILD_MODULE)


class ZombieProducer(LineChild):
    """``with ZombieProducer(conf) as z: z.call("init_transactions"); z.freeze(); ...``."""

    what = "The zombie producer"
    error = FaultError

    def __init__(self, config: dict[str, Any], name: str = "zombie") -> None:
        super().__init__(name)
        self.config = dict(config)

    def _pid_file(self) -> Path:
        return clients_dir() / f"{self.name}-{self.pid}.pid"

    def start(self) -> ZombieProducer:
        if self.proc is None:
            self._spawn([sys.executable, "-m", CHILD_MODULE])
            self.call("config", config=self.config)
        return self

    def send(self, op: str, **args: Any) -> None:
        """Queue a command without waiting (a frozen zombie reads it when thawed)."""
        self._write(json.dumps({"op": op, **args}))

    def result(self, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        """The answer to the oldest command not yet answered."""
        return self._answer(timeout)

    def call(self, op: str, timeout: float = CALL_TIMEOUT, **args: Any) -> dict[str, Any]:
        """Run a command and return its answer: ``{"ok": bool, ...}``; errors carry Kafka's error name."""
        self.send(op, **args)
        return self.result(timeout)

    # the fault: freeze is inject, thaw is heal
    def inject(self) -> ZombieProducer:
        return self.freeze()

    def heal(self) -> None:
        self.thaw()

    def stop(self) -> None:
        """End the child (a frozen one dies too), remove its pid file."""
        self._end()

    def __enter__(self) -> ZombieProducer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
