"""``eoslab bench cluster``: how fast the teaching cluster starts, recovers, and how big it is.

Targets on a 2-core machine (:mod:`eoslab.bench.targets`): cold start to ready, one broker
restart back in the ISR, whole cluster resident. Each figure is printed with its target
and the ratio, measured in this run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from eoslab._heal import heal
from eoslab._timeouts import HEAL, ISR
from eoslab.bench.targets import BROKER_RESTART_S, CLUSTER_RSS_MB, COLD_START_S
from eoslab.cluster import Cluster
from eoslab.runs import describe_machine
from eoslab.topology import DEMO_TOPIC


@dataclass
class Figure:
    name: str
    value: float
    target: float

    def line(self) -> str:
        ok = "ok" if self.value <= self.target else "OVER TARGET"
        ratio = self.value / self.target
        return f"{self.name:<38}{self.value:>9.1f}   target ≤ {self.target:<7g} ratio {ratio:5.2f}  {ok}"


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
    cluster.wait_for_isr(DEMO_TOPIC, 0, [b.node_id for b in cluster.topology.brokers if b != node], timeout=ISR)
    t0 = time.monotonic()
    cluster.start(node, wait=False)
    cluster.wait_full_isr(timeout=HEAL)  # the broker's own start, then its catch-up: a heal's patience
    return time.monotonic() - t0


def bench_cluster(cluster: Cluster, fresh: bool = False) -> list[Figure]:
    print(f"eoslab bench cluster on {describe_machine()}, backend {cluster.backend.name}")
    figures = []
    if fresh:
        cluster.reset()
        secs = time_start(cluster)
        figures.append(Figure("fresh start (format + ready) (s)", secs, COLD_START_S))
        print(figures[-1].line(), flush=True)
    cluster.up()
    cluster.down()
    secs = time_start(cluster)
    figures.append(Figure("cold start to ready (s)", secs, COLD_START_S))
    print(figures[-1].line(), flush=True)
    rss = cluster_rss_mb(cluster)
    figures.append(Figure("cluster RSS after start (MB)", rss, CLUSTER_RSS_MB))
    print(figures[-1].line(), flush=True)
    secs = time_broker_restart(cluster)
    figures.append(Figure("broker restart to back in ISR (s)", secs, BROKER_RESTART_S))
    print(figures[-1].line(), flush=True)
    heal(cluster)
    rss = cluster_rss_mb(cluster)
    figures.append(Figure("cluster RSS after restart + heal (MB)", rss, CLUSTER_RSS_MB))
    print(figures[-1].line(), flush=True)
    return figures
