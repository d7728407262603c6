"""``python -m tools.kitbench wire``: what each client really sends, read from the fault proxy's trace.

The harness (librdkafka) and Kafka's ProducerPerformance get the same settings
(:mod:`eoslab.runs`), but a setting is only a bound: whether the two compare like for like is
decided by what reaches the brokers. Both clients send at saturation through the fault proxy,
each under its own ``client.id``, and the trace of their Produce requests gives, per client:

* records per batch (a batch closes at ``batch.size`` or after ``linger.ms``: at saturation both
  should fill it), batches per request;
* Produce requests one partition had unanswered at once (the most, and on average over time):
  ``max.in.flight.requests.per.connection`` = 5 on both sides, yet librdkafka's idempotent producer
  counts MESSAGES in flight against that limit of 5 requests (``rdkafka_broker.c``:
  ``RD_KAFKA_IDEMP_MAX_INFLIGHT - rktp_msgs_inflight``), so a partition sends another request only
  while fewer than 5 records are unanswered: one full batch at a time (the trace shows a second request
  only behind a batch of 1-4 records, e.g. the end of a transaction).

Local backend only (the Java tool runs on this machine, its bootstrap the proxy's).
"""

from __future__ import annotations

import heapq
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from eoslab.bench import _harness
from eoslab.bench._harness import BenchError
from eoslab.bench._peer import run_peer
from eoslab.cluster import Cluster
from eoslab.faults import Proxy
from eoslab.runs import EOS_PEERS, Workload, matrix

__all__ = ["WireStats", "bench_wire", "measure_wire", "wire_stats"]

HARNESS_SECONDS = 3.0
"""The harness's slice through the proxy: a few hundred requests per partition."""
JAVA_RECORDS = 30_000
"""The Java tool's records: its first seconds run interpreted, so it needs a few thousand batches' worth."""


@dataclass
class WireStats:
    """One client's Produce requests for one mode, as the proxy saw them."""

    client: str
    label: str
    requests: int
    batches: int
    records_per_batch: float  # median
    batches_per_request: float  # mean
    max_in_flight: int  # the most Produce requests one partition had unanswered at once
    mean_in_flight: float  # per partition, unanswered requests on average between its first and last
    records_in_flight_at_send: int  # the most records a partition had unanswered when it sent another request

    def line(self) -> str:
        return (
            f"  {self.label:<11} {self.client:<7} {self.requests:6d} requests"
            f"  {self.records_per_batch:5.0f} records/batch"
            f"  {self.batches_per_request:4.1f} batches/request  in flight per partition: "
            f"max {self.max_in_flight}, mean {self.mean_in_flight:.2f}; "
            f"sent with up to {self.records_in_flight_at_send} records unanswered"
        )


def _overlap(requests: Sequence[tuple[float, float, int]]) -> tuple[int, float, int]:
    """For one partition's (sent, answered, records) requests: the most unanswered at once, the mean number
    unanswered between the first send and the last answer, and the most records unanswered when another
    request was sent (a request answered at the instant another is sent no longer counts)."""
    most = records_at_send = 0
    open_: list[tuple[float, int]] = []  # (answered, records) of the requests sent and not yet answered
    for t0, t1, n in sorted(requests):
        while open_ and open_[0][0] <= t0:
            heapq.heappop(open_)
        if open_:
            records_at_send = max(records_at_send, sum(k for _, k in open_))
        heapq.heappush(open_, (t1, n))
        most = max(most, len(open_))
    span = max(t1 for _, t1, _ in requests) - min(t0 for t0, _, _ in requests)
    busy = sum(t1 - t0 for t0, t1, _ in requests)
    return most, busy / span if span > 0 else float(most), records_at_send


def wire_stats(rows: Iterable[dict[str, Any]], client: str, label: str) -> WireStats:
    """Figures of the Produce rows of a proxy trace (``Proxy.trace(client_id=...)``); requests not yet answered
    count for the batches, not for the requests in flight."""
    counts: list[int] = []
    per_request: list[int] = []
    by_partition: dict[tuple[Any, Any], list[tuple[float, float, int]]] = defaultdict(list)
    for r in rows:
        if r.get("api") != "Produce":
            continue
        items = (r.get("request") or {}).get("items") or []
        per_request.append(len(items))
        for it in items:
            counts.append(int(it["record_count"]))
            if r.get("response_time"):
                key = (it.get("topic"), it.get("partition"))
                by_partition[key].append((r["time"], r["response_time"], int(it["record_count"])))
    if not counts:
        raise BenchError(f"{label}: the proxy traced no Produce request from the {client} client.")
    overlaps = [_overlap(v) for v in by_partition.values()]
    return WireStats(
        client=client,
        label=label,
        requests=len(per_request),
        batches=len(counts),
        records_per_batch=float(statistics.median(counts)),
        batches_per_request=statistics.mean(per_request),
        max_in_flight=max((m for m, _, _ in overlaps), default=0),
        mean_in_flight=round(statistics.mean(a for _, a, _ in overlaps), 2) if overlaps else 0.0,
        records_in_flight_at_send=max((k for _, _, k in overlaps), default=0),
    )


def measure_wire(
    cluster: Cluster, w: Workload, *, seconds: float = HARNESS_SECONDS, java_records: int = JAVA_RECORDS
) -> list[WireStats]:
    """Both clients at saturation through the proxy on a fresh topic: the harness (warmed up, then ``seconds``),
    then the Java tool (``java_records``); their figures, harness first."""
    if cluster.backend.name != "local":
        raise BenchError("python -m tools.kitbench wire runs on the local backend: the Java tool must reach the proxy.")
    proxy = Proxy.connect(cluster)
    run = uuid.uuid4().hex[:8]
    topic = f"bench-wire-{w.label}-{run}".replace("_", "-")
    ids = {"eoslab": f"eoslab-wire-{run}", "java": f"java-wire-{run}"}
    cluster.admin.create_topic(topic, partitions=w.partitions)
    try:
        p = _harness._producer(
            cluster.bootstrap_servers(proxied=True), w, {"client.id": ids["eoslab"], "delivery.report.only.error": True}
        )
        _harness.warm_up(p, topic, w, _harness.payload(w))
        proxy.clear_trace(client_id=ids["eoslab"])  # the warm-up's requests are not the steady state
        _harness.saturation_slice(p, [0], topic, w, seconds, 20 if w.transactional else 0)
        p.flush(30)
        time.sleep(0.2)  # the proxy records the last answers
        out = [wire_stats(proxy.trace(client_id=ids["eoslab"]), "eoslab", w.label)]
        if run_peer(cluster, w, topic, java_records, client_id=ids["java"], proxied=True) is None:
            return out
        out.append(wire_stats(proxy.trace(client_id=ids["java"]), "java", w.label))
        return out
    finally:
        for cid in ids.values():
            proxy.clear_trace(client_id=cid)
        cluster.admin.delete_topic(topic)


def bench_wire(cluster: Cluster, labels: Sequence[str] = EOS_PEERS) -> int:
    """Print what both clients send for each mode of ``labels`` (default: acks_all, idempotent, txn_100ms)."""
    workloads = {w.label: w for w in matrix("default").workloads}
    unknown = [x for x in labels if x not in workloads]
    if unknown:
        raise BenchError(f"Unknown mode {unknown[0]!r}: use one of {', '.join(workloads)}.")
    print("Produce requests through the fault proxy, at saturation (1 KB records, batch.size 65536, max.in.flight 5):")
    for label in labels:
        for s in measure_wire(cluster, workloads[label]):
            print(s.line(), flush=True)
    return 0
