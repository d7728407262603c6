"""Processes the kit starts and ends: pid files, liveness, and the one way to stop them.

Node JVMs, the fault proxy daemon and zombie producers are detached processes known
by a pid file. Three things are handled here once: a pid file can outlive its
process and its pid can be reused (``expect`` checks the command line before any
signal is sent), a SIGSTOPped process handles SIGTERM only once it runs again (so
SIGCONT follows), and a child of ours stays a zombie that looks alive until it is
reaped (psutil's wait reaps it).

The short-lived children a lesson or a test starts (pipeline processors, zombie producers, the Java
producer) are also *adopted*: if the Python process that started them ends with one still running (an
exception between start and stop, a kernel shut down, pytest at its end), the exit hook kills it, so
nothing the kit started outlives what started it.
"""

from __future__ import annotations

import atexit
import signal
import threading
from collections.abc import Iterable
from pathlib import Path

import psutil

KILL_WAIT = 10.0
"""After SIGKILL the kernel frees a process in milliseconds; 10 s only covers a machine swapping hard."""


def read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def write_pid(path: Path, pid: int) -> None:
    path.write_text(f"{pid}\n")


def process(pid: int | None, expect: str | None = None) -> psutil.Process | None:
    """The live process ``pid`` (a zombie is not live); with ``expect``, only if one of its
    command-line arguments equals it (a reused pid belongs to someone else)."""
    if pid is None:
        return None
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        if expect is not None and expect not in proc.cmdline():
            return None
        return proc
    except psutil.Error:
        return None


def from_pid_file(path: Path, expect: str | None = None) -> psutil.Process | None:
    return process(read_pid(path), expect)


def terminate(procs: Iterable[psutil.Process], timeout: float) -> None:
    """SIGTERM (a clean shutdown), wait up to ``timeout``, then SIGKILL whatever is left."""
    procs = list(procs)
    for proc in procs:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.send_signal(signal.SIGCONT)  # a paused process handles SIGTERM only once resumed
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    kill(alive)


def kill(procs: Iterable[psutil.Process]) -> None:
    """SIGKILL (a crash: no clean-up runs, a stopped process dies too) and wait until they are gone."""
    procs = list(procs)
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=KILL_WAIT)


def end_pid_files(folder: Path, expect: str, pattern: str = "*.pid") -> list[int]:
    """SIGKILL the process of every pid file in ``folder`` whose command line holds ``expect``;
    remove every such file (a stale one too). The pids ended."""
    ended = []
    for pid_file in folder.glob(pattern):
        proc = from_pid_file(pid_file, expect)
        if proc is not None:
            kill([proc])
            ended.append(proc.pid)
        pid_file.unlink(missing_ok=True)
    return ended


_ADOPTED: dict[int, psutil.Process] = {}
_ADOPTED_LOCK = threading.Lock()


def adopt(pid: int) -> None:
    """Count ``pid`` (a child just started) among the processes ended at this interpreter's exit."""
    try:
        proc = psutil.Process(pid)  # remembers the start time: a reused pid is never mistaken for it
    except psutil.Error:
        return
    with _ADOPTED_LOCK:
        _ADOPTED[pid] = proc


def release(pid: int) -> None:
    """``pid`` was ended and reaped by its owner: no longer the exit hook's."""
    with _ADOPTED_LOCK:
        _ADOPTED.pop(pid, None)


def adopted() -> list[psutil.Process]:
    """The adopted children still alive (a zombie waiting to be reaped is not)."""
    with _ADOPTED_LOCK:
        procs = list(_ADOPTED.values())
    alive = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.Error:
            pass
    return alive


@atexit.register
def end_adopted() -> list[int]:
    """SIGKILL every adopted child still alive; the pids ended (the exit hook, and a test's clean-up)."""
    procs = adopted()
    kill(procs)
    with _ADOPTED_LOCK:
        _ADOPTED.clear()
    return [p.pid for p in procs]
