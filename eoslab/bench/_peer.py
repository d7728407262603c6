"""The peer: Kafka's own ProducerPerformance of the pinned release, doing the harness's work.

A throughput figure from our harness means little alone on a shared 2-core laptop; the Java
tool, with the same acks, idempotence, linger.ms, batch.size, max.in.flight, buffer, record
size, record bytes and commit interval, says what the cluster gives a client that is not the
bottleneck. What makes it like for like (each found by measuring; see
docs/benchmarks-producers.md):

* the same bytes: the tool's ``--record-size`` fills every record with fresh random letters
  (a 1,024-call loop per record on the sending thread); the harness sends one constant value.
  The peer reads that constant value from a file (``--payload-file``; local backend).
* the same timed window: the tool's own timer starts after the JVM start and ``initTransactions``,
  but its first seconds run interpreted code while the JIT compiles the hot loop (its first 5 s
  report runs at a fraction of the later rate), and hold the metadata fetch and the
  InitProducerId that the harness's warm-up does outside its timer. The peer's figure is the
  rate AFTER the tool's first report (:data:`JAVA_WARMUP_S`), from the tool's own printed counts.
* the same buffer: ``buffer.memory`` = the harness's ``queue.buffering.max.kbytes``.

Not like for like, and said so beside every figure: transactions (the Java 4.x client speaks
transaction protocol v2, KIP-890: the epoch is bumped on every commit, partitions are added
implicitly; librdkafka speaks v1, an AddPartitionsToTxn round trip per transaction) and what
each client costs in CPU per record (measured and recorded: on 2 cores the client's CPU is
taken from the brokers).
"""

from __future__ import annotations

import math
import re
import resource
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from eoslab import _jars, _java
from eoslab._paths import PACKAGE_DIR
from eoslab.bench._cpu import CpuMeter, Reading, spent
from eoslab.bench._harness import BenchError, payload
from eoslab.cluster import Cluster
from eoslab.runs import JAVA_WARMUP_S, Workload

PEER_TIMEOUT = 300.0
"""A long run's peer (5 s warm-up + 60 s measured) plus a JVM start, with room for a loaded machine."""
STILL_WARMING = 1.15
"""A measured stretch whose last 5 s report runs this much faster than its first is flagged: the JIT was
still compiling (seen on a machine at load 20+); measure longer with ``--java-seconds``."""


_TOTAL = re.compile(
    r"(?P<records>\d+) records sent, (?P<rps>[\d.]+) records/sec \((?P<mbps>[\d.]+) MB/sec\), "
    r"(?P<avg>[\d.]+) ms avg latency, (?P<max>[\d.]+) ms max latency, (?P<p50>\d+) ms 50th, "
    r"(?P<p95>\d+) ms 95th, (?P<p99>\d+) ms 99th"
)
_WINDOW = re.compile(r"^(?P<records>\d+) records sent, (?P<rps>[\d.]+) records/sec \([\d.]+ MB/sec\), [^,]+, [^,]+\.$")


@dataclass
class PeerResult:
    """The tool's figures: its own total (warm-up included) and the rate after its first report."""

    records: int  # counted after the warm-up report
    seconds: float
    total_records: int
    total_records_per_s: float
    p50_ms: float
    p99_ms: float
    windows: list[float] = field(default_factory=list)  # records/s of each 5 s report, in order
    cpu_s: float = float("nan")  # the tool's JVM: user + system CPU, start to exit (local backend)
    payload: str = "constant"
    cpu: Reading = field(default_factory=dict)  # per process kind, over the measured window only (local backend)

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else float("nan")

    @property
    def still_warming(self) -> bool:
        steady = self.windows[1:]
        return len(steady) >= 2 and steady[-1] > STILL_WARMING * steady[0]


def parse_output(text: str) -> PeerResult | None:
    """The tool's report lines (one every 5 s) and its summary line; None without a summary."""
    found = list(_TOTAL.finditer(text))
    if not found:
        return None
    m = found[-1]
    total, rps = int(m["records"]), float(m["rps"])
    windows = [(int(w["records"]), float(w["rps"])) for w in map(_WINDOW.match, text.splitlines()) if w]
    elapsed = total / rps if rps else 0.0
    if windows:  # the rate after the first report: every count and duration from the tool's own lines
        first_n, first_rps = windows[0]
        records, seconds = total - first_n, elapsed - (first_n / first_rps if first_rps else 0.0)
    else:  # shorter than one report: no measured stretch
        records, seconds = 0, 0.0
    return PeerResult(records, seconds, total, rps, float(m["p50"]), float(m["p99"]), [r for _, r in windows])


def parse_total(text: str) -> PeerResult | None:
    """The tool's summary (kept for callers that only need the total)."""
    return parse_output(text)


MIN_STRETCH = 1 / 3
"""The least share of ``--java-seconds`` the tool's measured stretch holds if it runs at the fastest rate it has
shown in the run (:func:`peer_records`): 2 s of the default 6. A third, not all: the modes after the first run
slower than that (the tool's txn_100ms at 0.5-0.7 × its acks_all in the record runs of
docs/benchmarks-producers.md), so they run longer than the floor says, and the default run's ≤ 180 s holds that only
while the floor is short."""


def peer_records(w: Workload, rate_hint: float, seconds: float, fastest: float = 0.0) -> int:
    """How many records make the tool run its warm-up report plus ``seconds`` at about ``rate_hint``/s (the
    harness's rate in this mode), and its warm-up plus at least :data:`MIN_STRETCH` × ``seconds`` at ``fastest``
    (the tool's fastest rate so far in the run): where librdkafka's in-flight cap holds the harness back, the
    tool runs at a multiple of the harness's rate (txn_100ms: 2.7×), and a count sized by the harness alone
    ended before the tool's first report, leaving no measured window."""
    at_hint = rate_hint * (JAVA_WARMUP_S + seconds) * 1.2
    at_fastest = fastest * (JAVA_WARMUP_S + MIN_STRETCH * seconds) if fastest > 0 else 0.0
    return max(1000, math.ceil(max(at_hint, at_fastest)))


def java_args(
    w: Workload, topic: str, records: int, payload_file: Path | None = None, client_id: str | None = None
) -> list[str]:
    args = ["--topic", topic, "--num-records", str(records)]
    args += ["--payload-file", str(payload_file)] if payload_file else ["--record-size", str(w.record_size)]
    args += ["--throughput", "-1", "--producer-props", "bootstrap.servers={bootstrap}", *w.java_props()]
    if client_id:
        args.append(f"client.id={client_id}")  # the proxy's trace tells the clients apart by it
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


@dataclass
class _Window:
    """The CPU readings at the tool's first report (its warm-up ends) and at its summary (its measured part
    ends): the same window its rate is counted over (:func:`parse_output`)."""

    meter: CpuMeter | None
    warm: Reading | None = None
    end: Reading | None = None

    def see(self, line: str) -> None:
        if self.meter is None:
            return
        if self.warm is None and _WINDOW.match(line.rstrip("\n")):
            self.warm = self.meter.read()
        elif self.warm is not None and _TOTAL.search(line):
            self.end = self.meter.read()

    def spent(self) -> Reading:
        return spent(self.warm, self.end) if self.warm is not None and self.end is not None else {}


def _stream(cmd: list[str], meter: CpuMeter | None) -> tuple[int, str, str, Reading]:
    """Run the tool, reading its lines as they come (so its window's CPU is read when the window ends):
    its exit code, its output, its error output, each kind's CPU over its measured window."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True)
        window = _Window(meter.for_client(proc.pid) if meter is not None else None)
        watchdog = threading.Timer(PEER_TIMEOUT, proc.kill)
        watchdog.start()
        lines: list[str] = []
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                window.see(line)
                lines.append(line)
            rc = proc.wait()
        finally:
            watchdog.cancel()
        err.seek(0)
        stderr = err.read()
    if rc == -9:  # the watchdog's kill (or another's): the last line says so
        stderr += f"\nno summary within {PEER_TIMEOUT:g} s, the tool was stopped"
    return rc, "".join(lines), stderr, window.spent()


def _run_local(
    cluster: Cluster, args: list[str], proxied: bool = False, meter: CpuMeter | None = None
) -> tuple[str, float, Reading]:
    """The tool's output, its JVM's CPU from start to exit, and each process kind's CPU over its measured
    window (empty without a ``meter`` or without a report)."""
    argv = [a.replace("{bootstrap}", cluster.bootstrap_servers(proxied=proxied)) for a in args]
    cmd = [
        _java.java_executable(),
        *PERF_JVM,
        f"-Dlog4j2.configurationFile={PACKAGE_DIR / '_resources' / 'log4j2-tools.xml'}",
        "-cp",
        _jars.kafka_classpath(),
        "org.apache.kafka.tools.ProducerPerformance",
        *argv,
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc, out, err, window = _stream(cmd, meter)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        tail = (err or out).strip().splitlines()[-1:] or ["no output"]
        raise BenchError(f"kafka-producer-perf-test failed: {tail[0]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu, window


def run_peer(
    cluster: Cluster,
    w: Workload,
    topic: str,
    records: int,
    *,
    client_id: str | None = None,
    proxied: bool = False,
    meter: CpuMeter | None = None,
) -> PeerResult | None:
    """None when the workload has no Java equivalent (a commit every N records).

    Local backend: the tool's class on the kit's jars with the JVM flags of the shipped
    script, the harness's constant record read from a file; docker: the script itself inside
    a broker's container (``Cluster.tool``), where the file is not: random records there.
    ``proxied`` (local backend only) sends through the fault proxy, whose trace then shows what the
    tool really sent under ``client_id`` (:mod:`tools.kitbench.wire`). ``meter`` (local backend): the
    cluster's nodes, whose CPU is read with the tool's JVM's at both ends of its measured window.
    """
    if w.transactional and not w.commit_ms:
        return None
    if cluster.backend.name == "local":
        with tempfile.TemporaryDirectory(prefix="eoslab-peer-") as tmp:
            path = Path(tmp) / "record.txt"
            path.write_bytes(payload(w))  # one line, no newline: the tool sends exactly these bytes
            out, cpu, window = _run_local(cluster, java_args(w, topic, records, path, client_id), proxied, meter)
        kind = "constant"
    elif proxied:
        raise BenchError("The Java tool goes through the fault proxy on the local backend only.")
    else:
        args = java_args(w, topic, records, client_id=client_id)
        out, cpu, window = cluster.tool("producer-perf-test", *args, timeout=PEER_TIMEOUT), math.nan, {}
        kind = "random"
    result = parse_output(out)
    if result is None:
        raise BenchError(f"{w.label}: producer-perf-test printed no summary line: {out.strip()[-200:]!r}.")
    result.cpu_s, result.payload, result.cpu = cpu, kind, window
    return result
