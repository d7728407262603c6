"""The CPU each process kind spends over a measured window: the client, the 3 brokers, the 3 controllers.

Read from the kernel's per-process counters (psutil ``cpu_times``: user + system, every thread of the
process) at the window's two ends, so the harness's slice and the Java tool's stretch after its warm-up
are charged alike, and the brokers' share of a mode is seen beside the client's (on 2 cores what one
takes the other loses). The nodes are the cluster's own JVMs, found as ``eoslab status`` finds them; on
the docker backend their pids belong to the engine's machine, not necessarily this one, so the nodes
are not measured there (NaN), never measured wrongly.

:func:`read_kinds` and :func:`spent` are pure over whatever the ``times`` function returns, so the
accounting is tested on fake counters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psutil

from eoslab.cluster import Cluster
from eoslab.runs import CPU_KINDS

NODE_KINDS = {"broker": "brokers", "controller": "controllers"}

Reading = dict[str, float]
"""CPU seconds (user + system) per kind at one moment, summed over the kind's processes; NaN: unknown."""


def busy_s(times: Any) -> float:
    """User + system seconds of one ``cpu_times()`` (its children's, a JVM's tools, are theirs)."""
    return float(times.user + times.system)


def read_kinds(procs: Mapping[str, Sequence[Any]], times: Callable[[Any], Any]) -> Reading:
    """Each kind's CPU seconds now; a kind with no process, or one whose process is gone, is NaN."""
    out: Reading = {}
    for kind in CPU_KINDS:
        members = procs.get(kind, ())
        try:
            out[kind] = sum(busy_s(times(p)) for p in members) if members else math.nan
        except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
            out[kind] = math.nan
    return out


def spent(before: Reading, after: Reading) -> Reading:
    """The CPU seconds each kind spent between two readings: NaN when either end is unknown, or when the
    counters went backwards (another process under a reused pid)."""
    out: Reading = {}
    for kind in CPU_KINDS:
        d = after.get(kind, math.nan) - before.get(kind, math.nan)
        out[kind] = d if d >= 0 else math.nan  # NaN compares False: it stays NaN
    return out


def _cpu_times(p: psutil.Process) -> Any:
    return p.cpu_times()


class CpuMeter:
    """Reads the CPU of a client process and of the cluster's nodes, at the two ends of a window."""

    def __init__(self, nodes: Mapping[str, Sequence[psutil.Process]], client: psutil.Process | None) -> None:
        self.nodes, self.client = dict(nodes), client

    @classmethod
    def of(cls, cluster: Cluster, client_pid: int | None) -> CpuMeter:
        """The meter of ``cluster``'s running nodes (none on docker) and the client ``client_pid``."""
        nodes: dict[str, list[psutil.Process]] = {kind: [] for kind in NODE_KINDS.values()}
        if cluster.backend.name == "local":
            for s in cluster.status():
                if s.pid is not None:
                    nodes[NODE_KINDS[s.role]].append(psutil.Process(s.pid))
        return cls(nodes, psutil.Process(client_pid) if client_pid is not None else None)

    def for_client(self, pid: int) -> CpuMeter:
        """The same nodes, another client (the Java tool's JVM)."""
        return CpuMeter(self.nodes, psutil.Process(pid))

    def read(self) -> Reading:
        procs: dict[str, Sequence[psutil.Process]] = {**self.nodes, "client": [self.client] if self.client else []}
        return read_kinds(procs, _cpu_times)
