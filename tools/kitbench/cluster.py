"""``python -m tools.kitbench cluster``: how fast the teaching cluster starts, recovers, and how big it is.

Targets on a 2-core machine (:mod:`tools.kitbench.targets`): cold start to ready, one broker
restart back in the ISR, whole cluster resident. Each figure is printed with its target
and the ratio, measured in this run; each cold start also with its phase breakdown, the CPU
seconds the six JVMs spent until ready, and the load average (:mod:`tools.kitbench.startup`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from eoslab._heal import heal
from eoslab._timeouts import HEAL, ISR
from eoslab.bench._harness import BenchError
from eoslab.cluster import Cluster
from eoslab.runs import describe_machine
from eoslab.topology import DEMO_TOPIC
from tools.kitbench.startup import PATHS, ColdStart, breakdown, cold_start, round_order, start_path, summary
from tools.kitbench.targets import BROKER_RESTART_S, CLUSTER_RSS_MB, COLD_START_S


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


def time_broker_restart(cluster: Cluster, broker: str = "broker-3") -> float:
    """Kill a broker (SIGKILL), start it, time until every partition's ISR is complete again."""
    node = cluster.node(broker)
    cluster.kill(node)
    cluster.wait_for_isr(DEMO_TOPIC, 0, [b.node_id for b in cluster.topology.brokers if b != node], timeout=ISR)
    t0 = time.monotonic()
    cluster.start(node, wait=False)
    cluster.wait_full_isr(timeout=HEAL)  # the broker's own start, then its catch-up: a heal's patience
    return time.monotonic() - t0


def _report(cs: ColdStart, cluster: Cluster, name: str) -> Figure:
    kind = "fresh: no data, every node formatted" if cs.fresh else "data kept from the last run"
    print(f"{name} ({kind}): `eoslab up` = cluster ready + fault proxy", flush=True)
    for line in breakdown(cs, cluster):
        print(line)
    figure = Figure(f"{name} (s)", cs.total, COLD_START_S)
    print(figure.line(), flush=True)
    return figure


def bench_cluster(cluster: Cluster, fresh: bool = False, starts: int = 1, compare: bool = False) -> list[Figure]:
    """Print every figure beside its target; ``fresh`` adds a start from no data, ``starts`` repeats the cold
    start; ``compare`` makes each of those a round of two, without the class-data-sharing archive and with it
    (:data:`~tools.kitbench.startup.PATHS`, local backend), in alternating order, and ends with both paths'
    medians."""
    if compare and cluster.backend.name != "local":
        raise BenchError("--compare switches the local JVMs' archive (the image has its own): use the local backend.")
    print(f"python -m tools.kitbench cluster on {describe_machine()}, backend {cluster.backend.name}")
    figures = []
    if fresh:
        figures.append(_report(cold_start(cluster, fresh=True), cluster, "fresh start to ready"))
    else:
        cluster.up()  # data to start from, and a cluster that ran (as a learner's did)
    runs: dict[str, list[ColdStart]] = {p: [] for p in PATHS}
    for i in range(starts):
        for path in round_order(i) if compare else (None,):
            name = "cold start to ready" + (f" #{i + 1}" if starts > 1 else "") + (f" [{path}]" if path else "")
            with start_path(path):
                cs = cold_start(cluster)
            if path is not None:
                runs[path].append(cs)
            figures.append(_report(cs, cluster, name))
    if compare:
        print("without the class-data-sharing archive (EOSLAB_CDS=0) against with it (the kit's default):")
        for line in summary(runs, cluster):
            print(line)
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
