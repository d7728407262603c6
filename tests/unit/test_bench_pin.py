"""``eoslab bench producers --pin`` (eoslab.bench._pin): which CPUs each side gets, every thread pinned (Linux pins
one thread at a time), every thread given back its own former set."""

from __future__ import annotations

import os

import pytest

from eoslab.bench._harness import BenchError
from eoslab.bench._pin import Pinning, pinned, plan, threads_of


def test_the_client_gets_a_quarter_and_at_least_one_cpu() -> None:
    assert plan([0, 1]) == Pinning(client=(1,), cluster=(0,))
    assert plan(range(8)) == Pinning(client=(6, 7), cluster=(0, 1, 2, 3, 4, 5))
    assert plan({5, 2, 3}) == Pinning(client=(5,), cluster=(2, 3))
    assert plan([0, 1]).describe() == "client on CPU 1, cluster on CPU 0"


def test_one_cpu_is_refused_in_one_sentence() -> None:
    with pytest.raises(BenchError, match=r"--pin needs at least 2 CPUs .* run without --pin\.$"):
        plan([0])


class _Machine:
    """Threads per process (None: this one) and each thread's CPUs, as the kernel would keep them."""

    def __init__(self) -> None:
        self.tasks: dict[int | None, list[int]] = {None: [10, 11], 500: [50, 51, 52], 600: [60]}
        self.cpus: dict[int, set[int]] = {t: {0, 1} for ts in self.tasks.values() for t in ts}
        self.cpus[52] = {0}  # a thread someone had pinned before: it gets {0} back, not the process's set

    def threads(self, pid: int | None) -> list[int]:
        return list(self.tasks[pid])

    def get(self, tid: int) -> set[int]:
        if tid not in self.cpus:
            raise ProcessLookupError(tid)
        return set(self.cpus[tid])

    def set(self, tid: int, cpus: set[int]) -> None:
        if tid not in self.cpus:
            raise ProcessLookupError(tid)
        self.cpus[tid] = set(cpus)


def test_every_thread_is_pinned_and_restored() -> None:
    m = _Machine()
    with pinned([500, 600], Pinning((1,), (0,)), threads=m.threads, get=m.get, set_=m.set):
        assert m.cpus[10] == m.cpus[11] == {1}  # the client: this process, every thread
        assert all(m.cpus[t] == {0} for t in (50, 51, 52, 60))  # the nodes
        # Meanwhile a JVM thread ends and a new one is born (pinned, as it inherits its creator's set).
        m.tasks[500] = [50, 52, 53]
        del m.cpus[51]
        m.cpus[53] = {0}
    assert m.cpus[10] == m.cpus[11] == {0, 1}
    assert m.cpus[50] == {0, 1} and m.cpus[52] == {0} and m.cpus[60] == {0, 1}
    assert m.cpus[53] == {0, 1}  # born pinned: given its process's former set


def test_a_thread_that_ends_while_it_is_listed_is_skipped() -> None:
    """A JVM's thread can end between /proc's listing and the affinity call: the run goes on without it."""
    m = _Machine()
    m.tasks[500] = [50, 51, 52, 59]  # 59 listed, already gone
    with pinned([500], Pinning((1,), (0,)), threads=m.threads, get=m.get, set_=m.set):
        assert m.cpus[50] == {0} and 59 not in m.cpus
    assert m.cpus[50] == {0, 1}


def test_an_error_inside_the_block_still_restores() -> None:
    m = _Machine()
    with pytest.raises(RuntimeError), pinned([600], Pinning((1,), (0,)), threads=m.threads, get=m.get, set_=m.set):
        raise RuntimeError("the run failed")
    assert m.cpus[10] == {0, 1} and m.cpus[60] == {0, 1}


def test_this_process_threads_are_read_from_proc() -> None:
    tids = threads_of(None)
    assert os.getpid() in tids  # the main thread's id is the pid
    assert threads_of(2**22 + 12345) == []  # no such process: nothing to pin
