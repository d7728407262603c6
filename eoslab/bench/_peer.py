"""The peer: Kafka's own ProducerPerformance of the pinned release, with the same settings.

A throughput figure from our harness means little alone on a shared 2-core laptop; the
Java tool measured minutes apart in the same run, with the same acks, idempotence,
linger.ms, batch.size, max.in.flight and record size, says what the cluster gives.

Not like-for-like for transactions: the Java 4.x client speaks transaction protocol v2
(KIP-890: the epoch is bumped on every commit, partitions are added implicitly), while
librdkafka speaks v1 (an AddPartitionsToTxn round trip in every transaction).
"""

from __future__ import annotations

import re
import subprocess
import uuid
from dataclasses import dataclass

from eoslab import _jars, _java
from eoslab._paths import PACKAGE_DIR
from eoslab.bench._harness import BenchError
from eoslab.cluster import Cluster
from eoslab.runs import Workload

PEER_TIMEOUT = 300.0
"""The default matrix's largest workload (120,000 x 1 KiB) takes the Java tool ~10-30 s on 2 cores, plus a JVM start."""

TXN_NOTE = (
    "transactions are not like-for-like: the Java 4.x client uses transaction protocol v2 "
    "(KIP-890, epoch bump per commit, implicit AddPartitions), librdkafka v1"
)

_TOTAL = re.compile(
    r"(?P<records>\d+) records sent, (?P<rps>[\d.]+) records/sec \((?P<mbps>[\d.]+) MB/sec\), "
    r"(?P<avg>[\d.]+) ms avg latency, (?P<max>[\d.]+) ms max latency, (?P<p50>\d+) ms 50th, "
    r"(?P<p95>\d+) ms 95th, (?P<p99>\d+) ms 99th"
)


@dataclass
class PeerResult:
    records: int
    records_per_s: float
    p50_ms: float
    p99_ms: float

    @property
    def seconds(self) -> float:
        return self.records / self.records_per_s if self.records_per_s else 0.0


def parse_total(text: str) -> PeerResult | None:
    """The tool's last summary line (it prints a progress line every 5 s before it)."""
    found = list(_TOTAL.finditer(text))
    if not found:
        return None
    m = found[-1]
    return PeerResult(int(m["records"]), float(m["rps"]), float(m["p50"]), float(m["p99"]))


def java_args(w: Workload, topic: str) -> list[str]:
    args = [
        "--topic",
        topic,
        "--num-records",
        str(w.count),
        "--record-size",
        str(w.record_size),
        "--throughput",
        "-1",
        "--producer-props",
        "bootstrap.servers={bootstrap}",
        *w.java_props(),
    ]
    if w.transactional:
        args += [
            "--transactional-id",
            f"eoslab-bench-java-{uuid.uuid4().hex[:10]}",
            "--transaction-duration-ms",
            str(w.commit_ms),
        ]
    return args


PERF_JVM = (
    "-Xmx512M -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 "
    "-XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true"
).split()
"""What ``kafka-producer-perf-test.sh`` gives the tool (its KAFKA_HEAP_OPTS + kafka-run-class's perf opts).

The kit's short-lived-tool flags (C1 only, serial GC, 256 MB) start a JVM 40 % faster but
run this hot loop far slower: a peer handicapped that way would flatter the harness."""


def _run_local(cluster: Cluster, args: list[str]) -> str:
    argv = [a.replace("{bootstrap}", cluster.bootstrap_servers()) for a in args]
    cmd = [
        _java.java_executable(),
        *PERF_JVM,
        f"-Dlog4j2.configurationFile={PACKAGE_DIR / '_resources' / 'log4j2-tools.xml'}",
        "-cp",
        _jars.kafka_classpath(),
        "org.apache.kafka.tools.ProducerPerformance",
        *argv,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PEER_TIMEOUT, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise BenchError(f"kafka-producer-perf-test failed: {tail[0]}")
    return proc.stdout


def run_peer(cluster: Cluster, w: Workload, topic: str) -> PeerResult | None:
    """None when the workload has no Java equivalent (a commit every N records).

    Local backend: the tool's class on the kit's jars with the JVM flags of the shipped
    script; docker: the script itself inside a broker's container (``Cluster.tool``).
    """
    if w.transactional and not w.commit_ms:
        return None
    if cluster.backend.name == "local":
        out = _run_local(cluster, java_args(w, topic))
    else:
        out = cluster.tool("producer-perf-test", *java_args(w, topic), timeout=PEER_TIMEOUT)
    result = parse_total(out)
    if result is None:
        raise BenchError(f"{w.label}: producer-perf-test printed no summary line: {out.strip()[-200:]!r}.")
    return result
