"""Warm the brokers before the measured rounds: a new broker runs slowly until its JIT has compiled Kafka's hot paths.

A JVM starts by interpreting Kafka's code and compiles the methods that run often (C1 first, then C2).
Under the producers' load a new broker's compiler threads stay busy for a minute or more on 2 shared cores, and
throughput rises all along: on this kit's reference machine, rounds of every mode went from ~5,500 to ~60,000
records/s (geometric mean of the modes) over the first 90 s of load on a cluster just started, while the
brokers' two compiler threads fell from 40 % to under 10 % of a core (docs/benchmarks-producers.md). Rounds
measured in that minute compare a slower cluster with a faster one, whatever the rotation.

So a run first drives every mode in short slices, not recorded, until the brokers' compiler threads are
nearly idle (:data:`JIT_IDLE`; read per thread from ``/proc``, local backend) or, where those threads are not
visible (docker), until the rate stops rising (:data:`PLATEAU`), or until the matrix's cap. On a cluster
that has already worked, one such round finds the compilers idle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from eoslab.bench import _threads

WARMUP_SLICE_S = 0.5
"""One mode's slice in a warm-up round: short, so that a round of every mode is a few seconds."""
JIT_IDLE = 0.10
"""The brokers' compiler threads, summed, busy less than this share of one core over a round: warm."""
PLATEAU = 1.10
"""Without a view of the compilers: warm when two rounds in a row ran no faster than this times the best before."""
COMPILER_THREADS = ("C1 CompilerThre", "C2 CompilerThre")
"""HotSpot's compiler threads as ``/proc/<pid>/task/<tid>/comm`` shows them (names cut at 15 characters)."""


Compilers = dict[tuple[int, int], float]
"""(broker pid, thread id) → CPU seconds so far, of the brokers' JIT compiler threads."""


def compilers(pids: Iterable[int], read: Callable[[int], _threads.Threads] = _threads.read) -> Compilers:
    """The JIT compiler threads of ``pids`` now, each with its CPU seconds so far (none visible: empty)."""
    return {(pid, tid): cpu for pid in pids for tid, (name, cpu) in read(pid).items() if name in COMPILER_THREADS}


def compiler_cores(before: Compilers, after: Compilers, seconds: float) -> float:
    """The compiler threads' CPU between two readings, in cores; NaN when none is visible (docker).

    Thread by thread, over the threads alive at the end (one born in between counts from 0): HotSpot ends an idle
    compiler thread (``UseDynamicNumberOfCompilerThreads``, on by default), and the difference of two sums over the
    threads alive at each end goes negative when one ends in between (-0.024 of a core, measured). A thread that
    ended in between is left out: its last CPU is no longer readable."""
    if not after:
        return math.nan
    return sum(cpu - before.get(key, 0.0) for key, cpu in after.items()) / seconds


def geo_mean(values: Sequence[float]) -> float:
    """The geometric mean of positive rates (each mode weighs alike, whatever its speed); NaN if any is 0."""
    if not values or min(values) <= 0:
        return math.nan
    return math.exp(sum(math.log(v) for v in values) / len(values))


def warmed(rates: Sequence[float], jit: Sequence[float]) -> str | None:
    """Why the brokers count as warm after these warm-up rounds, or None to go on.

    ``rates``: each round's geometric mean of the modes' records/s; ``jit``: each round's compiler threads in
    cores (NaN: not visible)."""
    if jit and not math.isnan(jit[-1]):
        return "jit idle" if jit[-1] < JIT_IDLE else None
    if len(rates) >= 3 and all(rates[k] <= PLATEAU * max(rates[:k]) for k in (len(rates) - 2, len(rates) - 1)):
        return "rate plateau"
    return None


@dataclass(frozen=True)
class Warmup:
    """What the warm-up did: per round its duration, rate (geometric mean) and compilers' cores; why it ended."""

    durations: tuple[float, ...]
    rates: tuple[float, ...]
    jit: tuple[float, ...]
    reason: str  # "jit idle", "rate plateau", "cap", or "none" (a matrix without warm-up)

    @property
    def seconds(self) -> float:
        return sum(self.durations)

    @property
    def beyond_first_s(self) -> float:
        """What a new cluster cost beyond the one round a warm cluster needs."""
        return sum(self.durations[1:])

    def env(self) -> dict[str, Any]:
        """The run's ``env`` columns (types fixed, so runs with and without a warm-up merge)."""
        first, last = (self.rates[0], self.rates[-1]) if self.rates else (math.nan, math.nan)
        jit0, jit1 = (self.jit[0], self.jit[-1]) if self.jit else (math.nan, math.nan)
        return {
            "warmup_rounds": len(self.durations),
            "warmup_s": float(round(self.seconds, 1)),
            "warmup_beyond_first_s": float(round(self.beyond_first_s, 1)),
            "warmup_reason": self.reason,
            "warmup_rate_first": float(first),
            "warmup_rate_last": float(last),
            "warmup_jit_first": float(jit0),
            "warmup_jit_last": float(jit1),
        }


NO_WARMUP = Warmup((), (), (), "none")
