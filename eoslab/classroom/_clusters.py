"""Grading clusters: ``eoslab grade --class --workers N`` grades on N clusters, one notebook on each at a time.

On one cluster most labs must run alone (:data:`eoslab.classroom._rerun.ALONE`): every Setup cell heals the
cluster, and labs 01, 02, 03 and 05 break nodes, set proxy rules or move leaders. Everything a heal touches
belongs to one cluster (its proxy is found by its control port, its zombies and Java producers by pid files
under its data folder), so N clusters grade N such labs side by side.

Slot 0 is the instructor's running cluster (``$EOSLAB_PORT_OFFSET``, :func:`eoslab._paths.data_dir`): one
worker grades exactly as before. Slot k >= 1 is a cluster started for the run, on ports
base + 2000 + 500·k (k=1: +2500) with its data in ``<data folder>-grade<k>``. Those blocks keep clear of the
offsets the suite and the docs use (docker +500, bad input +750, workers +5000·K, a learner's 1000), and
stop below the ephemeral ports (32768 and up), where an outgoing connection could take a broker's port.

A slot is started by ``python -m eoslab.cli up`` with the slot's environment, in a session of its own: the
fault proxy and every JVM read their ports and folders from the environment, so nothing is started in this
process. The grader's subprocess and its kernel get the same environment (``grade_job``'s ``env``), which
they read before anything imports eoslab. At the end of the run, whatever ended it (Ctrl-C included), the
``up`` still in flight are interrupted and every slot k >= 1 that runs is stopped with ``eoslab down``,
orphans of an earlier run that was killed included; slot 0 never. Data folders are kept: a restart is faster.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from eoslab._paths import data_dir
from eoslab._procs import from_pid_file
from eoslab.errors import GradingError
from eoslab.topology import Topology

SLOT_BASE = 2000
SLOT_STEP = 500
"""Slot k's ports: the instructor's offset + SLOT_BASE + SLOT_STEP·k."""
EPHEMERAL_PORTS = 32768
"""The first port the system may hand an outgoing connection (Linux's default ip_local_port_range)."""
SLOT_MEMORY_GB = 3.8
"""Memory a grading worker takes with its cluster: two workers, two clusters, notebooks and Spark measured at 7.6 GB
at most (docs/instructor.md, docs/reliability.md)."""
UP_STOP_WAIT_S = 30.0
"""How long an interrupted ``eoslab up`` gets to stop the nodes it started (``Cluster.up`` does it on SIGINT)."""
DOWN_WAIT_S = 120.0

Popen = Callable[..., Any]


def _base(environ: Mapping[str, str]) -> int:
    raw = environ.get("EOSLAB_PORT_OFFSET", "0") or "0"
    try:
        return int(raw)
    except ValueError:
        msg = f"EOSLAB_PORT_OFFSET={raw!r} is not a number: set it to e.g. 1000, or unset it."
        raise GradingError(msg) from None


def slot_offset(k: int, base: int) -> int:
    return base + SLOT_BASE + SLOT_STEP * k if k else base


def _top_port(offset: int) -> int:
    return max(Topology(port_offset=offset).all_ports())


def most_workers(base: int) -> int:
    """The most workers whose clusters all listen below the ephemeral ports, from the instructor's ``base``."""
    k = 0
    while _top_port(slot_offset(k + 1, base)) < EPHEMERAL_PORTS:
        k += 1
    return k + 1


def slot_data(k: int, environ: Mapping[str, str]) -> Path:
    """Slot k's data folder: the instructor's + ``-grade<k>``."""
    raw = environ.get("EOSLAB_DATA")
    base = Path(raw).expanduser().resolve() if raw else data_dir()
    return base.with_name(f"{base.name}-grade{k}") if k else base


def _env(k: int, base: int, data: Path) -> dict[str, str]:
    return {"EOSLAB_PORT_OFFSET": str(slot_offset(k, base)), "EOSLAB_DATA": str(data)}


def slot_env(k: int, environ: Mapping[str, str]) -> dict[str, str]:
    """What slot ``k``'s processes (its ``eoslab up``, the grader, the kernel) add to ``environ``: nothing for
    slot 0, the instructor's cluster; for k >= 1 its port offset and data folder."""
    if k == 0:
        return {}
    base = _base(environ)
    top = _top_port(slot_offset(k, base))
    if top >= EPHEMERAL_PORTS:
        raise GradingError(
            f"--workers {k + 1}: grading cluster {k} would listen on ports up to {top}, among the ephemeral ports "
            f"({EPHEMERAL_PORTS} and up) that outgoing connections take: give --workers {most_workers(base)} at most."
        )
    return _env(k, base, slot_data(k, environ))


def check_machine(workers: int, available_bytes: float, cores: int) -> str | None:
    """Refuse ``workers`` clusters that the free memory cannot hold; a warning when there are more than cores."""
    need = (workers - 1) * SLOT_MEMORY_GB
    have = available_bytes / 1e9
    if need > have:
        fits = 1 + int(have // SLOT_MEMORY_GB)
        raise GradingError(
            f"--workers {workers} starts {workers - 1} more clusters, about {need:.1f} GB with their notebooks, and "
            f"{have:.1f} GB is free: give --workers {fits} or fewer, or --one-cluster."
        )
    if workers > cores:
        return (
            f"--workers {workers} on {cores} cores: each cluster with its notebook takes about a core, and more "
            "clusters than cores slow each other down until lab checks with time limits fail; give "
            f"--workers {cores} or fewer."
        )
    return None


def slot_runs(data: Path) -> bool:
    """Does anything of the cluster whose data folder is ``data`` run (a node's JVM, its fault proxy)?"""
    pid_files = [*data.glob("*/pid"), *data.glob("proxy/*.pid")]
    return any(from_pid_file(p) is not None for p in pid_files)


def _orphans(environ: Mapping[str, str]) -> dict[int, Path]:
    """Slots k >= 1 whose data folder is there, started by this run or an earlier one (killed before its end)."""
    first = slot_data(1, environ)
    stem = first.name.removesuffix("-grade1")
    found = {}
    for folder in first.parent.glob(f"{stem}-grade*"):
        m = re.fullmatch(re.escape(stem) + r"-grade(\d+)", folder.name)
        if m and int(m.group(1)) >= 1 and folder.is_dir():
            found[int(m.group(1))] = folder
    return found


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Teardown is not interrupted: a second Ctrl-C would leave clusters running behind the instructor."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _waited(proc: Any, timeout: float) -> int | None:
    """``proc``'s exit code, or None when it is still running after ``timeout`` seconds."""
    try:
        code: int = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return code


def _tail(log: IO[bytes]) -> str:
    log.seek(0)
    lines = [ln.strip() for ln in log.read().decode(errors="replace").splitlines() if ln.strip()]
    return lines[-1] if lines else "no output"


class GradingClusters:
    """The clusters of one class run: slot 0 (the instructor's) and slots 1..n-1, started when :meth:`start`
    asks for them and stopped when the ``with`` block ends, however it ends.

    A slot whose ``eoslab up`` fails becomes a note (:attr:`notes`) and the run goes on with the others.
    ``popen`` starts ``up`` and ``down`` (unit tests give a fake); ``say`` prints what the instructor should know.
    """

    def __init__(
        self,
        n: int,
        *,
        popen: Popen = subprocess.Popen,
        environ: Mapping[str, str] | None = None,
        say: Callable[[str], None] = print,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.n = n
        self._environ = dict(os.environ if environ is None else environ)
        self._envs = {k: slot_env(k, self._environ) for k in range(1, n)}  # a bad N is refused before any start
        self._popen, self._say, self._clock = popen, say, clock
        self._starting: dict[int, tuple[Any, IO[bytes], float]] = {}
        self._ready: dict[int, float] = {0: 0.0}
        self._failed: set[int] = set()
        self.notes: list[str] = []

    def __enter__(self) -> GradingClusters:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def env(self, k: int) -> dict[str, str]:
        """What slot ``k``'s grader adds to its environment."""
        return dict(self._envs.get(k, {}))

    @property
    def starts(self) -> dict[int, float]:
        """Seconds each slot k >= 1 took to be ready (its ``eoslab up``), for those that are."""
        return {k: s for k, s in sorted(self._ready.items()) if k}

    def _offset(self, k: int) -> str:
        return f"+{int(self._envs[k]['EOSLAB_PORT_OFFSET']) - _base(self._environ)}"

    def start(self, wanted: int) -> None:
        """Start slots 1..min(n, wanted)-1 that are not started yet, all at once: a run with fewer notebooks
        than workers starts fewer clusters, one with none starts none."""
        taken = set(self._starting) | set(self._ready) | self._failed
        new = [k for k in range(1, min(self.n, wanted)) if k not in taken]
        if not new:
            return
        stop = "; ".join(
            f"EOSLAB_PORT_OFFSET={e['EOSLAB_PORT_OFFSET']} EOSLAB_DATA={e['EOSLAB_DATA']} eoslab down"
            for e in (self._envs[k] for k in new)
        )
        self._say(
            f"starting {len(new)} grading cluster(s) beside yours, ports {', '.join(self._offset(k) for k in new)}; "
            f"each is stopped at the end of the run (if the run is killed: {stop})"
        )
        for k in new:
            log = tempfile.TemporaryFile()
            proc = self._popen(
                [sys.executable, "-m", "eoslab.cli", "up"],
                env={**self._environ, **self._envs[k]},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self._starting[k] = (proc, log, self._clock())

    def ready(self) -> set[int]:
        """The slots a notebook may be graded on now: slot 0 and every slot whose ``eoslab up`` succeeded."""
        for k, (proc, log, t0) in list(self._starting.items()):
            code = proc.poll()
            if code is None:
                continue
            del self._starting[k]
            if code == 0:
                self._ready[k] = self._clock() - t0
            else:
                self._failed.add(k)
                self.notes.append(
                    f"grading cluster {k} (ports {self._offset(k)}) did not start ({_tail(log)}): the class was "
                    "graded on the other clusters."
                )
            log.close()
        return set(self._ready)

    def _interrupt_starts(self) -> None:
        """SIGINT to every ``up`` in flight: ``Cluster.up`` then stops the nodes it started (SIGTERM would not)."""
        if self._starting:
            self._say(f"interrupting {len(self._starting)} grading cluster start(s)")
        for proc, _, _ in self._starting.values():
            proc.send_signal(signal.SIGINT)
        for proc, log, _ in self._starting.values():
            if _waited(proc, UP_STOP_WAIT_S) is None:
                with suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # what it started is stopped below, by its pid files
                proc.wait()
            log.close()
        self._starting.clear()

    def stop(self) -> None:
        """End the ``up`` in flight, then stop every slot k >= 1 that runs, this run's and earlier ones'."""
        with _sigint_ignored():
            self._interrupt_starts()
            folders = {k: slot_data(k, self._environ) for k in range(1, self.n)} | _orphans(self._environ)
            running = {k: data for k, data in sorted(folders.items()) if slot_runs(data)}
            if not running:
                return
            self._say(
                f"stopping {len(running)} grading cluster(s) (data kept in {', '.join(map(str, running.values()))})"
            )
            base = _base(self._environ)
            downs = {
                k: self._popen(
                    [sys.executable, "-m", "eoslab.cli", "down"],
                    env={**self._environ, **_env(k, base, data)},
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
                for k, data in running.items()
            }
            for k, proc in downs.items():
                if _waited(proc, DOWN_WAIT_S) != 0:
                    env = _env(k, base, running[k])
                    self._say(
                        f"grading cluster {k} did not stop: run EOSLAB_PORT_OFFSET={env['EOSLAB_PORT_OFFSET']} "
                        f"EOSLAB_DATA={env['EOSLAB_DATA']} eoslab down"
                    )
