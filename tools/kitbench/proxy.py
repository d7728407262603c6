"""``python -m tools.kitbench proxy``: what the fault proxy costs, direct vs proxied, measured in ONE run.

Targets (:mod:`tools.kitbench.targets`): throughput through the proxy against direct, and
the added p99 latency, at acks=all with idempotence. Both paths use the same
topic, record size and client settings; the phases alternate (direct,
proxied, ...: 5 rounds) so that a busy moment of the 2-core laptop does not
land on one path only, and the MEDIAN round of each path is compared.
Latency samples alternate message by message between two producers for the
same reason, and are taken BEFORE the throughput rounds: those leave
gigabytes of dirty pages whose write-back steals the CPU for a minute, which
is a p99 of the page cache, not of the proxy. Each figure is printed with its
target and the ratio.
"""

from __future__ import annotations

import statistics
import time
import uuid
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Producer

from eoslab._librdkafka import BENCH
from eoslab._timeouts import CLIENT_CALL, CLIENT_DRAIN
from eoslab.cluster import Cluster
from eoslab.faults import Proxy, ensure_proxy
from eoslab.runs import describe_machine
from tools.kitbench.targets import PROXY_ADDED_P99_MS, PROXY_ROUND_S, PROXY_THROUGHPUT_RATIO

RECORD = b"x" * 1024
ROUNDS = 5  # per path; the direct figure alone varies by ±30 % between rounds on a busy 2-core laptop
LATENCY_SAMPLES = 2000  # round trips of ~1 ms each: p99 rests on the 20 slowest, ~5 s for both paths

PRODUCER: dict[str, Any] = {
    "enable.idempotence": True,  # the setting under test: PID + sequences, acks=all, in-flight <= 5
    "acks": "all",
    "linger.ms": 5,  # a realistic batching window; both paths use the same
    "compression.type": "none",  # measure bytes moved, not CPU spent compressing
    "logger": BENCH,  # "Coordinator load in progress: retrying" is not a benchmark figure
}
WARMUP_S = 4.0  # brokers restarted a minute ago run interpreted code: warm both paths, then measure


@dataclass
class Throughput:
    records: int
    seconds: float

    @property
    def per_s(self) -> float:
        return self.records / self.seconds

    @property
    def mb_s(self) -> float:
        return self.per_s * len(RECORD) / 2**20


def throughput(bootstrap: str, topic: str, seconds: float) -> Throughput:
    p = Producer({"bootstrap.servers": bootstrap, "client.id": "bench-proxy-tput", **PRODUCER})
    p.produce(topic, RECORD)
    p.flush(CLIENT_CALL)  # connections, metadata and the producer id are not part of the figure
    sent, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < seconds:
        for _ in range(1000):
            try:
                p.produce(topic, RECORD)
                sent += 1
            except BufferError:
                p.poll(0.005)
        p.poll(0)
    p.flush(CLIENT_DRAIN)
    return Throughput(sent, time.monotonic() - t0)


def latencies(direct: str, proxied: str, topic: str, samples: int = LATENCY_SAMPLES) -> tuple[list[float], ...]:
    """Milliseconds from produce() to the delivery report, one message at a time, alternating paths."""
    producers = [
        Producer({"bootstrap.servers": b, "client.id": f"bench-proxy-lat{i}", **PRODUCER, "linger.ms": 0})
        for i, b in enumerate((direct, proxied))
    ]
    out: tuple[list[float], list[float]] = ([], [])
    for p in producers:
        p.produce(topic, RECORD, partition=0)
        p.flush(CLIENT_CALL)
    for _ in range(samples):
        for p, acc in zip(producers, out, strict=True):
            t0 = time.perf_counter()
            p.produce(topic, RECORD, partition=0)
            p.flush(CLIENT_CALL)
            acc.append((time.perf_counter() - t0) * 1000)
    return out


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98]


def bench_proxy(cluster: Cluster, seconds: float = PROXY_ROUND_S) -> int:
    """Print the figures; exit code 0 when both targets are met, 1 otherwise."""
    ensure_proxy(cluster)
    proxy = Proxy(cluster.topology)
    proxy.clear_rules(client_id="bench-proxy-tput")
    topic = f"bench-proxy-{uuid.uuid4().hex[:8]}"
    cluster.admin.create_topic(topic, partitions=3)
    direct, proxied = cluster.bootstrap_servers(), cluster.bootstrap_servers(proxied=True)
    print(f"machine: {describe_machine()}")
    print(f"topic {topic} (3 partitions, RF 3, min.insync.replicas=2), 1 KiB records, acks=all, idempotent")
    try:
        for name, bootstrap in (("direct", direct), ("proxied", proxied)):
            t = throughput(bootstrap, topic, WARMUP_S)
            print(f"  warm-up  {name:<8} {t.per_s:>9.0f} records/s (not counted)")
        lat_d, lat_p = latencies(direct, proxied, topic)
        rounds: dict[str, list[Throughput]] = {"direct": [], "proxied": []}
        for _ in range(ROUNDS):
            for name, bootstrap in (("direct", direct), ("proxied", proxied)):
                t = throughput(bootstrap, topic, seconds)
                rounds[name].append(t)
                print(f"  {name:<8} {t.per_s:>9.0f} records/s  {t.mb_s:6.1f} MiB/s  ({t.records} in {t.seconds:.1f} s)")
        ratio = statistics.median(t.per_s for t in rounds["proxied"]) / statistics.median(
            t.per_s for t in rounds["direct"]
        )
        added = p99(lat_p) - p99(lat_d)
    finally:
        proxy.clear_trace(client_id="bench-proxy-tput")  # the trace is for lessons, not for 10^5 batches
        cluster.admin.delete_topic(topic)
    ok_t, ok_l = ratio >= PROXY_THROUGHPUT_RATIO, added <= PROXY_ADDED_P99_MS
    print(
        f"throughput proxied/direct   {ratio:6.2f}x (medians)   target ≥ {PROXY_THROUGHPUT_RATIO:g}x   "
        f"{'ok' if ok_t else 'UNDER TARGET'}"
    )
    print(
        f"latency p50 direct {statistics.median(lat_d):.2f} ms, proxied {statistics.median(lat_p):.2f} ms; "
        f"p99 direct {p99(lat_d):.2f} ms, proxied {p99(lat_p):.2f} ms"
    )
    print(
        f"added p99 latency          {added:6.2f} ms  target ≤ {PROXY_ADDED_P99_MS:g} ms   "
        f"ratio {added / PROXY_ADDED_P99_MS:5.2f}  "
        f"{'ok' if ok_l else 'OVER TARGET'}"
    )
    return 0 if ok_t and ok_l else 1
