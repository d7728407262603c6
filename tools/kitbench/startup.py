"""One cold start, taken apart: what `eoslab up` waits for, phase by phase, and the CPU it costs.

A cold start is ``eoslab up`` from no JVM: the kit prepares configs, formats nodes that have no
data, spawns six JVMs, waits until Kafka itself says it is ready (quorum, brokers, internal
topics), completes every ISR, runs the preferred election, checks the seed topic, and starts the
fault proxy. The kit marks each step as it ends (``Cluster.up(on_phase=...)``); each node's own log
says when its JVM wrote its first line, when Kafka said "Kafka Server started", and the role's
milestones. The CPU seconds (user + sys) each JVM spent until the cluster was ready are read from
the kernel: on a shared 2-core machine wall-clock time swings with other load, CPU time much less,
and it says whether a change removed work or only moved it.
"""

from __future__ import annotations

import os
import resource
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import psutil

from eoslab._up import up
from eoslab.cluster import Cluster, NodeStart, StartMarks, node_start
from eoslab.faults import stop_proxy

LOG_LINES = 20000
"""How far back a node's log is read for its last start: a fresh broker writes ~1,200 lines while starting."""


@dataclass
class ColdStart:
    """The figures of one cold start (times in seconds since ``marks.t0``, CPU in seconds)."""

    fresh: bool
    marks: StartMarks
    nodes: list[NodeStart] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)
    """user + sys of each node's JVM from its spawn until the cluster was ready."""
    tools_cpu: float = 0.0
    """user + sys of the kit's child processes (kafka-storage format JVMs) during the start."""
    kit_cpu: float = 0.0
    """user + sys of this Python process during the start (probes, admin client)."""
    proxy_cpu: float = 0.0
    load: tuple[float, float] = (0.0, 0.0)
    """1-minute load average before and after."""

    @property
    def total(self) -> float:
        return self.at("proxy") or 0.0

    @property
    def jvm_cpu(self) -> float:
        return sum(self.cpu.values())

    def at(self, phase: str) -> float | None:
        return self.marks.since_t0(phase)

    def node_at(self, name: str, milestone: str) -> float | None:
        for n in self.nodes:
            if n.name == name and (t := n.at(milestone)) is not None:
                return t - self.marks.t0
        return None

    def first(self, milestone: str) -> float | None:
        times = [t for n in self.nodes if (t := self.node_at(n.name, milestone)) is not None]
        return min(times) if times else None

    def last(self, milestone: str, names: list[str]) -> float | None:
        times = [self.node_at(n, milestone) for n in names]
        return None if any(t is None for t in times) else max(t for t in times if t is not None)

    def as_dict(self) -> dict[str, object]:
        """Flat figures for a record of many runs (A/B comparisons)."""
        out: dict[str, object] = {
            "fresh": self.fresh,
            "total_s": round(self.total, 3),
            "jvm_cpu_s": round(self.jvm_cpu, 2),
            "tools_cpu_s": round(self.tools_cpu, 2),
            "kit_cpu_s": round(self.kit_cpu, 2),
            "proxy_cpu_s": round(self.proxy_cpu, 2),
            "load_before": self.load[0],
            "load_after": self.load[1],
        }
        out.update({f"at_{k}": round(v - self.marks.t0, 3) for k, v in self.marks.marks.items()})
        out.update({f"cpu_{k}": round(v, 2) for k, v in self.cpu.items()})
        for n in self.nodes:
            out.update({f"{n.name}_{k}": round(v - self.marks.t0, 3) for k, v in n.events.items()})
            if n.spawned is not None:
                out[f"{n.name}_spawned"] = round(n.spawned - self.marks.t0, 3)
        return out


def _cpu(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return float(t.user + t.system)


def _rusage_cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def node_cpu(cluster: Cluster) -> dict[str, float]:
    """user + sys seconds of each running node's process (local backend: the JVM itself)."""
    out = {}
    for status in cluster.status():
        if status.pid is None:
            continue
        try:
            out[status.name] = _cpu(psutil.Process(status.pid))
        except psutil.Error:
            continue
    return out


def cold_start(cluster: Cluster, fresh: bool = False) -> ColdStart:
    """Stop the proxy and the cluster (``fresh``: delete the data too), then time ``eoslab up``."""
    stop_proxy(cluster.topology)
    if fresh:
        cluster.reset()
    else:
        cluster.down()
    load0 = os.getloadavg()[0]
    children0, self0 = _rusage_cpu(resource.RUSAGE_CHILDREN), _rusage_cpu(resource.RUSAGE_SELF)
    marks = StartMarks()
    cs = ColdStart(fresh, marks)

    def on_phase(phase: str) -> None:
        marks(phase)
        if phase == "seed":  # the cluster is ready: what the JVMs and the kit spent getting there
            cs.cpu = node_cpu(cluster)
            cs.tools_cpu = _rusage_cpu(resource.RUSAGE_CHILDREN) - children0
            cs.kit_cpu = _rusage_cpu(resource.RUSAGE_SELF) - self0

    pid = up(cluster, on_phase=on_phase)
    try:
        cs.proxy_cpu = _cpu(psutil.Process(pid))
    except psutil.Error:
        pass
    cs.nodes = [node_start(n.name, cluster.logs(n.name, LOG_LINES)) for n in cluster.topology.nodes]
    cs.load = (load0, os.getloadavg()[0])
    return cs


def _fmt(t: float | None) -> str:
    return "    —" if t is None else f"{t:5.1f}"


_BEFORE_JVMS = (
    ("prepare: configs, ports, argfiles", "prepared"),
    ("format (kafka-storage, nodes without data)", "formatted"),
    ("spawn 6 JVMs", "spawned"),
)
_ASKED_KAFKA = (
    ("quorum: 3 voters + leader (DescribeQuorum)", "quorum"),
    ("3 unfenced brokers (DescribeCluster)", "brokers"),
    ("internal topics (FindCoordinator, both keys)", "coordinators"),
    ("every ISR complete", "full_isr"),
    ("preferred-leader election", "election"),
    ("seed topic checked on every broker", "seed"),
    ("fault proxy answering (spawned before the JVMs)", "proxy"),
)
"""The kit's steps, as (label, the phase it marks when the step ends), in the order they end."""


def _steps(
    cs: ColdStart, steps: tuple[tuple[str, str], ...], prev: float
) -> list[tuple[str, float | None, float | None]]:
    """Each step's label, when it ended and how long after the last step before it that ended (``prev``)."""
    rows: list[tuple[str, float | None, float | None]] = []
    for label, phase in steps:
        t = cs.at(phase)
        rows.append((label, t, None if t is None else t - prev))
        prev = t if t is not None else prev
    return rows


def _node_lines(cs: ColdStart) -> list[str]:
    """Each node's start from its own log: spawned, its first line, Kafka's STARTED, and the JVM's start time."""
    lines = ["  per node, from its own log (s since start): spawned / first log line / Kafka Server started"]
    for n in cs.nodes:
        spawned = None if n.spawned is None else n.spawned - cs.marks.t0
        first, started = cs.node_at(n.name, "first_log"), cs.node_at(n.name, "started")
        took = None if started is None or spawned is None else started - spawned
        lines.append(
            f"    {n.name:<14}{_fmt(spawned)} /{_fmt(first)} /{_fmt(started)}   JVM start to STARTED {_fmt(took)} s"
        )
    return lines


def _logged(cs: ColdStart, controllers: list[str], brokers: list[str]) -> list[tuple[str, float | None]]:
    """The milestones the nodes logged, when the first (or the last) node logged each."""
    rows = [
        ("raft leader known (first controller to log it)", cs.first("leader_known")),
        ("active controller ('Becoming the active controller')", cs.first("active")),
        ("brokers registered (last broker's log)", cs.last("registered", brokers)),
        ("brokers unfenced (last broker's log)", cs.last("unfenced", brokers)),
        ("all STARTED (last node's log)", cs.last("started", controllers + brokers)),
    ]
    if cs.fresh:  # on a restart the controllers replay these records while loading the metadata log
        rows += [
            ("__consumer_offsets created (controller's log)", cs.first("offsets_created")),
            ("__transaction_state created (controller's log)", cs.first("txn_created")),
        ]
    rows.append(("first __transaction_state partition loaded", cs.first("txn_loaded")))
    return rows


def _cpu_lines(cs: ColdStart, controllers: list[str], brokers: list[str]) -> list[str]:
    ctrl_cpu = sum(cs.cpu.get(n, 0.0) for n in controllers)
    brk_cpu = sum(cs.cpu.get(n, 0.0) for n in brokers)
    cores = os.cpu_count() or 1
    return [
        f"  CPU s until ready (user+sys): 6 JVMs {cs.jvm_cpu:.1f} (controllers {ctrl_cpu:.1f}, brokers {brk_cpu:.1f}); "
        f"format JVMs {cs.tools_cpu:.1f}; kit {cs.kit_cpu:.1f}; proxy {cs.proxy_cpu:.1f}",
        f"  load average (1 min) {cs.load[0]:.1f} before, {cs.load[1]:.1f} after, on {cores} cores",
    ]


def breakdown(cs: ColdStart, cluster: Cluster) -> list[str]:
    """The phase table of one cold start: when each step ended (s since ``eoslab up`` began) and how long it took."""
    controllers = [n.name for n in cluster.topology.controllers]
    brokers = [n.name for n in cluster.topology.brokers]
    lines = [f"  {'phase':<52}{'ends at':>8}{'takes':>8}"]
    lines += [f"  {label:<52}{_fmt(t):>8}{_fmt(d):>8}" for label, t, d in _steps(cs, _BEFORE_JVMS, 0.0)]
    lines += _node_lines(cs)
    lines.append("  what the nodes logged (s since start):")
    lines += [f"    {label:<50}{_fmt(t):>8}" for label, t in _logged(cs, controllers, brokers)]
    lines.append("  what the kit saw (asked Kafka):")
    asked = _steps(cs, _ASKED_KAFKA, cs.at("spawned") or 0.0)  # counted from the JVMs' spawn
    lines += [f"    {label:<50}{_fmt(t):>8}{_fmt(d):>8}" for label, t, d in asked]
    lines += _cpu_lines(cs, controllers, brokers)
    return lines


CDS_ENV = "EOSLAB_CDS"
"""``0``: the local backend's JVMs start without the class-data-sharing archive (:mod:`eoslab._cds`)."""
PATHS = ("without CDS", "with CDS")
"""The two start paths `python -m tools.kitbench cluster --compare` interleaves: ``EOSLAB_CDS=0``, and the kit's
default."""


@contextmanager
def start_path(path: str | None) -> Iterator[None]:
    """Within the block, the local backend's nodes start without the archive (``PATHS[0]``) or with it
    (``PATHS[1]``); ``None`` leaves ``$EOSLAB_CDS`` as it is."""
    old = os.environ.get(CDS_ENV)
    if path == PATHS[0]:
        os.environ[CDS_ENV] = "0"
    elif path is not None:
        os.environ.pop(CDS_ENV, None)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(CDS_ENV, None)
        else:
            os.environ[CDS_ENV] = old


def round_order(i: int) -> tuple[str, ...]:
    """Round ``i``'s order: the two paths alternate who goes first, so neither always meets the other's leftovers."""
    return PATHS if i % 2 == 0 else PATHS[::-1]


def summary(runs: dict[str, list[ColdStart]], cluster: Cluster) -> list[str]:
    """Median (min-max) of each path's figures over its runs: wall-clock and the CPU the JVMs spent."""
    controllers = [n.name for n in cluster.topology.controllers]
    brokers = [n.name for n in cluster.topology.brokers]
    figures: dict[str, Callable[[ColdStart], float | None]] = {
        "cold start to ready (s)": lambda c: c.total,
        "quorum seen (s)": lambda c: c.at("quorum"),
        "3 unfenced brokers seen (s)": lambda c: c.at("brokers"),
        "CPU s, 3 controllers": lambda c: sum(c.cpu.get(n, 0.0) for n in controllers),
        "CPU s, 3 brokers": lambda c: sum(c.cpu.get(n, 0.0) for n in brokers),
        "load average before": lambda c: c.load[0],
    }
    lines = [
        f"  {'median (min-max) over ' + str(len(runs[PATHS[0]])) + ' runs':<34}" + "".join(f"{p:>20}" for p in PATHS)
    ]
    for label, get in figures.items():
        cells = []
        for path in PATHS:
            values = [v for c in runs[path] if (v := get(c)) is not None]
            cells.append(f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})" if values else "—")
        lines.append(f"  {label:<34}" + "".join(f"{c:>20}" for c in cells))
    return lines
