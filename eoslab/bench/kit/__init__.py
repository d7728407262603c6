"""The kit's own benchmarks: how fast the teaching cluster starts and recovers, what it costs in memory
(``eoslab bench cluster``), and what the fault proxy costs (``eoslab bench proxy``). They measure the
kit, not Kafka's exactly-once: the course's measurements are :mod:`eoslab.bench.producers`."""

from eoslab.bench.kit.cluster import Figure, bench_cluster
from eoslab.bench.kit.proxy import bench_proxy

__all__ = ["Figure", "bench_cluster", "bench_proxy"]
