"""``eoslab bench cluster``: how fast the teaching cluster starts, recovers, and how big it is.

Targets on a 2-core machine (issue 2): cold start to ready ≤ 20 s, one broker
restart back in the ISR ≤ 8 s, whole cluster ≤ 3 GB resident. Each figure is
printed with its target and the ratio, measured in this run.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass

import psutil

from eoslab.cluster import Cluster
from eoslab.topology import DEMO_TOPIC

TARGETS = {"cold start to ready (s)": 20.0, "broker restart to back in ISR (s)": 8.0, "cluster RSS (MB)": 3072.0}


@dataclass
class Figure:
    name: str
    value: float
    target: float

    def line(self) -> str:
        ok = "ok" if self.value <= self.target else "OVER TARGET"
        ratio = self.value / self.target
        return f"{self.name:<38}{self.value:>9.1f}   target ≤ {self.target:<7g} ratio {ratio:5.2f}  {ok}"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    mem = psutil.virtual_memory().total / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, {platform.system()} {platform.release()}"


def cluster_rss_mb(cluster: Cluster) -> float:
    return sum(s.rss_mb or 0.0 for s in cluster.status())


def time_start(cluster: Cluster) -> float:
    t0 = time.monotonic()
    cluster.up()
    return time.monotonic() - t0


def time_broker_restart(cluster: Cluster, broker: str = "broker-3") -> float:
    """Kill a broker (SIGKILL), start it, time until every partition's ISR is complete again."""
    node = cluster.node(broker)
    cluster.kill(node)
    cluster.wait_for_isr(DEMO_TOPIC, 0, [b.node_id for b in cluster.topology.brokers if b != node], timeout=60)
    t0 = time.monotonic()
    cluster.start(node, wait=False)
    cluster.wait_full_isr(timeout=120)
    return time.monotonic() - t0


def bench_cluster(cluster: Cluster, fresh: bool = False) -> list[Figure]:
    print(f"eoslab bench cluster on {machine()}, backend {cluster.backend.name}")
    figures = []
    if fresh:
        cluster.reset()
        secs = time_start(cluster)
        figures.append(Figure("fresh start (format + ready) (s)", secs, TARGETS["cold start to ready (s)"]))
        print(figures[-1].line(), flush=True)
    cluster.up()
    cluster.down()
    secs = time_start(cluster)
    figures.append(Figure("cold start to ready (s)", secs, TARGETS["cold start to ready (s)"]))
    print(figures[-1].line(), flush=True)
    rss = cluster_rss_mb(cluster)
    figures.append(Figure("cluster RSS after start (MB)", rss, TARGETS["cluster RSS (MB)"]))
    print(figures[-1].line(), flush=True)
    secs = time_broker_restart(cluster)
    figures.append(Figure("broker restart to back in ISR (s)", secs, TARGETS["broker restart to back in ISR (s)"]))
    print(figures[-1].line(), flush=True)
    cluster.heal()
    rss = cluster_rss_mb(cluster)
    figures.append(Figure("cluster RSS after restart + heal (MB)", rss, TARGETS["cluster RSS (MB)"]))
    print(figures[-1].line(), flush=True)
    return figures
