"""The kit's own benchmarks: how fast the teaching cluster starts and recovers, what it costs in memory
(``eoslab bench cluster``), what the fault proxy costs (``eoslab bench proxy``), and how fast a class is
graded on clusters of their own (``eoslab bench grading``). They measure the kit, not Kafka's exactly-once:
the course's measurements are :mod:`eoslab.bench.producers`."""

from eoslab.bench.kit.cluster import Figure, bench_cluster
from eoslab.bench.kit.grading import bench_grading
from eoslab.bench.kit.proxy import bench_proxy

__all__ = ["Figure", "bench_cluster", "bench_grading", "bench_proxy"]
