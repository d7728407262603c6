"""``eoslab bench producers --pin``: the client on cores of its own, the cluster on the others (Linux, local backend).

On a 2-core laptop the producing client and the six Kafka JVMs share both cores, so what the client burns
(librdkafka's spin with idempotence, Python's own loop) is taken from the brokers, and the other way round.
Pinned, the client (this process: its Python thread and every librdkafka thread it starts; the Java and C
peers it starts inherit it) runs on :attr:`Pinning.client` and the nodes on :attr:`Pinning.cluster`, so each
figure is what that side can do with its share, and "where the cost goes" is not mixed by the scheduler.

Linux applies an affinity to ONE thread (``sched_setaffinity(tid)``); a new thread inherits its creator's.
So every existing thread of each process is pinned (``/proc/<pid>/task``), the Python thread first, before
it creates any producer, and every thread is given back its own former set when the run ends.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from eoslab.bench import _threads
from eoslab.bench._harness import BenchError

SetAffinity = Callable[[int, set[int]], None]
GetAffinity = Callable[[int], set[int]]


@dataclass(frozen=True)
class Pinning:
    """Which CPUs the client gets and which the cluster's nodes get."""

    client: tuple[int, ...]
    cluster: tuple[int, ...]

    def describe(self) -> str:
        return f"client on CPU {_cpus(self.client)}, cluster on CPU {_cpus(self.cluster)}"


def _cpus(cpus: Sequence[int]) -> str:
    return ",".join(str(c) for c in cpus)


def plan(available: Iterable[int]) -> Pinning:
    """The client gets a quarter of the CPUs this process may use (at least one, the highest numbered), the
    cluster the rest; refused in one sentence with fewer than 2."""
    cpus = sorted(available)
    if len(cpus) < 2:
        raise BenchError(
            f"--pin needs at least 2 CPUs to give the client and the cluster their own; this process may use "
            f"{len(cpus)}: run without --pin."
        )
    k = max(1, len(cpus) // 4)
    return Pinning(client=tuple(cpus[-k:]), cluster=tuple(cpus[:-k]))


def threads_of(pid: int | None) -> list[int]:
    """Every thread id of ``pid`` (this process when None; none when it has ended)."""
    return sorted(_threads.read(pid))


def _set(tid: int, cpus: set[int]) -> None:
    os.sched_setaffinity(tid, cpus)


def _get(tid: int) -> set[int]:
    return set(os.sched_getaffinity(tid))


@contextmanager
def pinned(
    nodes: Sequence[int],
    pinning: Pinning,
    *,
    threads: Callable[[int | None], list[int]] = threads_of,
    get: GetAffinity = _get,
    set_: SetAffinity = _set,
) -> Iterator[Pinning]:
    """Within the block, this process's threads on ``pinning.client`` and every thread of the ``nodes`` pids on
    ``pinning.cluster``; each thread's former set restored after (a thread that ended meanwhile is skipped; a
    thread born meanwhile gets its process's former set)."""
    saved: dict[int | None, tuple[set[int], dict[int, set[int]]]] = {}
    plan_: list[tuple[int | None, set[int]]] = [(None, set(pinning.client))] + [
        (p, set(pinning.cluster)) for p in nodes
    ]
    try:
        for pid, cpus in plan_:
            before = {t: cpus_now for t in threads(pid) if (cpus_now := _read(get, t)) is not None}
            whole = set().union(*before.values()) if before else set()
            saved[pid] = (whole, before)
            for t in before:
                _quiet(set_, t, cpus)
        yield pinning
    finally:
        for pid, (whole, before) in saved.items():
            for t in threads(pid):
                _quiet(set_, t, before.get(t, whole))


def _read(get: GetAffinity, tid: int) -> set[int] | None:
    """One thread's CPUs; None for a thread that ended between the listing and the call."""
    try:
        return get(tid)
    except (ProcessLookupError, FileNotFoundError):
        return None


def _quiet(set_: SetAffinity, tid: int, cpus: set[int]) -> None:
    """Set one thread's CPUs; a thread that ended between the listing and the call is no error."""
    if not cpus:
        return
    try:
        set_(tid, cpus)
    except (ProcessLookupError, FileNotFoundError):
        pass
