"""CPU per thread of one process, grouped by what the thread does (Linux ``/proc``).

librdkafka names its threads (``prctl(PR_SET_NAME)``): ``rdk:broker<nodeid>`` for each broker's thread
(``rdkafka_broker.c``; the bootstrap and internal brokers are ``rdk:broker-1``), ``rdk:main`` for the
handle's main thread (``rdkafka.c``). Any other thread of the process is the application's: the Python
interpreter (its main thread keeps the process name), or ``rdkafka_performance``'s producing loop.

A thread's CPU is the first field of ``/proc/<pid>/task/<tid>/schedstat`` (nanoseconds on the CPU), or,
where the kernel lacks schedstat, utime + stime of ``.../stat`` (fields 14 and 15, in clock ticks).
:func:`group` is pure, so the grouping is tested on made-up threads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

KINDS = ("broker_threads", "rdk_main", "app")
"""``rdk:broker*`` threads summed, ``rdk:main``, and every other thread of the process summed."""

Threads = dict[int, tuple[str, float]]
"""tid → (thread name, CPU seconds so far)."""


def kind_of(name: str) -> str:
    if name.startswith("rdk:broker"):
        return "broker_threads"
    return "rdk_main" if name == "rdk:main" else "app"


def _cpu_s(task: Path) -> float:
    try:
        return int((task / "schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15


def read(pid: int | None = None) -> Threads:
    """Every thread of ``pid`` (this process by default) now: its name and its CPU seconds."""
    root = Path(f"/proc/{pid if pid is not None else 'self'}/task")
    out: Threads = {}
    try:
        tasks = list(root.iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out[int(task.name)] = ((task / "comm").read_text().strip(), _cpu_s(task))
        except (OSError, ValueError, IndexError):
            continue  # the thread ended between the listing and the read
    return out


def group(before: Threads, after: Threads, only: Iterable[int] | None = None) -> dict[str, float]:
    """CPU seconds per :data:`KINDS` between two readings, over the threads alive at the end (a thread
    born inside the window counts from 0); ``only``: just those tids (one producer's threads)."""
    keep = set(only) if only is not None else None
    out = dict.fromkeys(KINDS, 0.0)
    for tid, (name, cpu) in after.items():
        if keep is not None and tid not in keep:
            continue
        start = before.get(tid, (name, 0.0))[1]
        out[kind_of(name)] += max(0.0, cpu - start)
    return out


def new_threads(before: Mapping[int, object], after: Mapping[int, object]) -> set[int]:
    """The tids present in ``after`` and not in ``before``: the threads a new client started."""
    return set(after) - set(before)
