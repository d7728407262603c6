"""The words a run's readers print beside its figures, and the labels its writers put in its rows.

:mod:`eoslab.bench` writes them into a run and :mod:`eoslab.analysis` reads them back: both import them from
here, so the analysis needs nothing of the process that measured.
"""

from __future__ import annotations

import math
from typing import Any

CPEER_CLIENT = "rdkafka_perf"
"""The ``client`` of the C peer's (rdkafka_performance's) rows in a run's summary table."""
CPEER_LABELS = ("acks_all", "idempotent")
"""The workloads the C peer measures: the baseline and idempotence (rdkafka_performance has no transactions)."""
CPEER_WARMUP_S = 3.0
"""What the C peer's figure leaves out: its first 3 s (metadata, connections, InitProducerId, the brokers'
first batches); the harness's slices start on producers warmed up likewise."""
JAVA_WARMUP_S = 5.0
"""What the peer's figure leaves out: the tool's first report, which it prints after 5 s
(``Stats.reportingInterval``, fixed in the tool). Records acked in it are not counted."""

TXN_NOTE = (
    "transactions are not like-for-like: the Java 4.x client uses transaction protocol v2 "
    "(KIP-890, epoch bump per commit, implicit AddPartitions), librdkafka v1"
)

IDEMPOTENT_NOTE = (
    "the idempotent producer's cost as the quiet `python -m tools.kitbench spin` run measured it. Throughput: "
    "librdkafka (idempotent and transactional modes) lets a partition have at most 5 MESSAGES in flight, so with "
    "batches of ~60 records one batch per partition is in flight (1.3 requests awaiting an answer over the 3 "
    "brokers, 8.6 at acks=all); client CPU: while a partition is capped, its broker thread polls without sleeping "
    "(the spin: 10.5 µs of broker-thread CPU per record, 1.2 at acks=all), which did not by itself decide the "
    "throughput (15 partitions filled record by record spun too and ran at 97 % of acks=all). librdkafka's own C "
    "benchmark, rdkafka_performance, on the same settings lost 21-24 % with idempotence in the quiet record runs, "
    "where the harness lost 28-33 % and the brokers' CPU per record did not change (`eoslab bench producers "
    "--c-peer`)"
)
"""What the course layout's idempotent and transactional modes cost, and only what the quiet spin run
(docs/benchmarks-producers.md) measured: librdkafka's rdkafka_broker.c limits a
partition's requests with ``RD_KAFKA_IDEMP_MAX_INFLIGHT - rktp_msgs_inflight``, where ``rktp_msgs_inflight``
counts messages, so a partition with a batch of 5 or more records in flight sends no other (``waitresp_cnt``);
and the broker thread, whose wake-up was set before the cap stopped the send, polls with a 0 ms timeout until the
answer comes (``wakeups`` and the thread's CPU per record; :mod:`tools.kitbench.spin`). The C peer's figures: the
record runs of docs/benchmarks-producers.md."""

AUDIT_ABORTED = b"abort:"
"""The first bytes of an audit record's value: how the writer ended its transaction."""


def warmup_sentence(env: Any) -> str:
    """One sentence on a run's warm-up from its ``env`` row (empty for a run recorded without one)."""
    reason = env.get("warmup_reason") if hasattr(env, "get") else None
    if not isinstance(reason, str) or reason == "none":
        return ""
    n, s = int(env["warmup_rounds"]), float(env["warmup_s"])
    rates = f"{env['warmup_rate_first']:,.0f} → {env['warmup_rate_last']:,.0f} records/s"
    visible = not math.isnan(float(env["warmup_jit_first"]))
    jit = (
        f"; the brokers' JIT compilers {env['warmup_jit_first']:.0%} → {env['warmup_jit_last']:.0%} of a core"
        if visible
        else ""
    )
    head = f"warm-up (not measured): {n} round{'s' if n != 1 else ''} of every mode, {s:.0f} s, {rates}{jit}"
    if reason == "jit idle":
        return f"{head}: the brokers' compilers were idle, so the rounds below met warm brokers"
    if reason == "rate plateau":
        return f"{head}: the rate had stopped rising, so the rounds below met warm brokers"
    still = "while the brokers' compilers were still busy" if visible else "before the rate had levelled off"
    return f"{head}: stopped at its limit {still}, so the first rounds below may be slower than the last"
