"""``python -m tools.kitbench spin``: where the idempotent producer's client CPU goes, and what removes it.

librdkafka's idempotent producer lets a partition have at most ``RD_KAFKA_IDEMP_MAX_INFLIGHT`` (5) MESSAGES in
flight (``rktp_msgs_inflight``, checked in ``rd_kafka_toppar_producer_serve``, ``rdkafka_broker.c``). When the
oldest queued record is older than ``linger.ms``, that function has already set the broker thread's next
wake-up to "now" (``rd_kafka_msgq_allow_wakeup_at``, ``rdkafka_msg.c``) before the cap stops it from sending;
the thread then polls with a 0 ms timeout until the answer lowers the count. The research predicts a spin
(``wakeups`` per record far above acks=all's); the controls:

* ``linger100``: ``linger.ms=100``, above the round trip: the wake-up lies in the future, no spin;
* ``p15``: 15 partitions, 5 per leader: the connection's ``max.in.flight`` window fills, the request waits in
  ``rkb_outbufs`` and ``rd_kafka_broker_outbufs_space`` returns 0 before the wake-up is set;
* ``mif1``: acks=all with ``max.in.flight=1``: the capped idempotent producer's window (one request per
  partition, one partition per leader) without idempotence: the throughput the cap alone allows;
* ``p15s0``: ``p15`` with ``sticky.partitioning.linger.ms=0``: librdkafka's partitioner sends keyless records to
  one partition for 2 × ``linger.ms`` (``rdkafka_conf.c``); 0 spreads them record by record, so several
  partitions per leader really have a batch in flight at once;
* ``p18s0``: 18 partitions (6 per leader), spread record by record: with one request per partition, more
  requests can be ready than the connection's window of 5, so one waits in ``rkb_outbufs`` and
  ``rd_kafka_broker_outbufs_space`` returns 0 before the wake-up is set (``rdkafka_broker.c``); with 5 per
  leader (``p15``) at most 5 exist, exactly the window, and none ever waits.

Each cell is one producer of this process, alone, at saturation: warmed up (connections, producer id, a first
batch acked), then ``warm_s`` more at full speed, then the measured window of ``seconds``: records acked in it
(produced minus the growth of ``len(producer)``, its queue and in-flight), this process's threads' CPU from
``/proc/self/task`` (:mod:`eoslab.bench._threads`), the nodes' CPU (:class:`CpuMeter`), and librdkafka's
statistics every 500 ms (:mod:`eoslab.bench._stats`). The drain after the window is not counted. Modes of a
variant alternate (A B, then B A), over ``rounds`` rounds; the table is the median per cell.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from eoslab._timeouts import CLIENT_DRAIN
from eoslab.bench import _harness, _stats, _threads
from eoslab.bench._cpu import CpuMeter, spent
from eoslab.bench._harness import BenchError
from eoslab.bench._rounds import TOPIC_CONFIG, _trim, delete_topics
from eoslab.cluster import Cluster
from eoslab.runs import Workload

STATS_MS = 500
"""``statistics.interval.ms`` of the measured producers: several documents inside a window of seconds."""


@dataclass(frozen=True)
class Variant:
    name: str
    what: str
    modes: tuple[str, ...]
    settings: dict[str, Any] = field(default_factory=dict)  # Workload fields replaced
    conf: dict[str, Any] = field(default_factory=dict)  # librdkafka properties added (not a Workload field)


VARIANTS = (
    Variant("course", "the course's settings: 3 partitions (one per leader), linger.ms=5", ("acks_all", "idempotent")),
    Variant("linger100", "linger.ms=100 (above the round trip)", ("acks_all", "idempotent"), {"linger_ms": 100}),
    Variant("p15", "15 partitions (5 per leader), linger.ms=5", ("acks_all", "idempotent"), {"partitions": 15}),
    Variant("mif1", "acks=all with max.in.flight=1 (the capped window)", ("acks_all",), {"max_in_flight": 1}),
    Variant(
        "p15s0",
        "15 partitions, sticky.partitioning.linger.ms=0 (a partition per record, not per 10 ms)",
        ("acks_all", "idempotent"),
        {"partitions": 15},
        {"sticky.partitioning.linger.ms": 0},
    ),
    Variant(
        "p18s0",
        "18 partitions (6 per leader), sticky.partitioning.linger.ms=0: more capped partitions than the window",
        ("acks_all", "idempotent"),
        {"partitions": 18},
        {"sticky.partitioning.linger.ms": 0},
    ),
)
TXN_MODE = "txn_100ms"


def workload(v: Variant, mode: str) -> Workload:
    if mode == TXN_MODE:
        return replace(Workload("transactional", commit_ms=100), **v.settings)
    return replace(Workload(mode), **v.settings)


@dataclass
class _Counter:
    """Records produced; delivery errors; the statistics documents as they arrive."""

    produced: int = 0
    errors: int = 0
    docs: list[tuple[float, _stats.Snapshot]] = field(default_factory=list)

    def on_error(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self.errors += 1

    def on_stats(self, doc: str) -> None:
        self.docs.append((time.monotonic(), _stats.snapshot(doc)))


def _run_for(p: Producer, topic: str, w: Workload, seconds: float, n: _Counter, txn: Any) -> None:
    value = _harness.payload(w)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(200):
            _harness._produce(p, topic, value)
            txn.after_send()
        n.produced += 200
        p.poll(0)


def _reading(p: Producer, meter: CpuMeter, n: _Counter) -> dict[str, Any]:
    return {"t": time.monotonic(), "threads": _threads.read(), "cpu": meter.read(), "n": n.produced, "q": len(p)}


def _figures(a: dict[str, Any], b: dict[str, Any], mine: set[int], n: _Counter) -> dict[str, Any]:
    """The window's figures from its two readings: per second, per record, per thread kind."""
    acked = (b["n"] - a["n"]) - (b["q"] - a["q"])
    secs = b["t"] - a["t"]
    per = 1e6 / acked if acked > 0 else float("nan")
    cpu = spent(a["cpu"], b["cpu"])
    th = _threads.group(a["threads"], b["threads"], only=mine)
    docs = [s for t, s in n.docs if a["t"] <= t <= b["t"]]
    st = _stats.over(docs)
    row: dict[str, Any] = {
        "records": acked,
        "seconds": secs,
        "records_per_s": acked / secs if secs > 0 else float("nan"),
        "client_us": cpu.get("client", float("nan")) * per,
        "brokers_us": cpu.get("brokers", float("nan")) * per,
        **{f"{k}_us": v * per for k, v in th.items()},
    }
    for k in ("wakeups_per_record", "produce_per_s", "waitresp_cnt", "waitresp_msg_cnt", "outbuf_cnt"):
        row[k] = getattr(st, k) if st is not None else float("nan")
    for k in ("msgs_inflight", "xmit_msgq_cnt", "rtt_p50_ms", "rtt_p99_ms", "batch_msgs"):
        row[k] = getattr(st, k) if st is not None else float("nan")
    return row


def measure_cell(
    bootstrap: str,
    topic: str,
    w: Workload,
    warm_s: float,
    seconds: float,
    meter: CpuMeter,
    conf: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One producer of this process at saturation: its figures over ``seconds`` after its warm-up."""
    n = _Counter()
    before = _threads.read()
    extra = {
        **(conf or {}),
        "delivery.report.only.error": True,
        "on_delivery": n.on_error,
        "statistics.interval.ms": STATS_MS,
        "stats_cb": n.on_stats,
    }
    try:
        p = _harness._producer(bootstrap, w, extra)
        _harness.warm_up(p, topic, w, _harness.payload(w))
        txn = _harness._Committer(p, w)
        _run_for(p, topic, w, warm_s, n, txn)
        mine = _threads.new_threads(before, _threads.read()) | {threading.get_native_id()}
        a = _reading(p, meter, n)
        _run_for(p, topic, w, seconds, n, txn)
        b = _reading(p, meter, n)
        txn.finish()
        left = p.flush(CLIENT_DRAIN)
    except KafkaException as exc:
        raise BenchError(f"{w.label}: the producer failed on {topic!r}: {exc.args[0].str()}.") from None
    if left or n.errors:
        raise BenchError(f"{w.label}: {n.errors} records failed, {left} unacknowledged on {topic!r}.")
    return {"mode": w.label, **_figures(a, b, mine, n)}


def plan(variants: tuple[Variant, ...], rounds: int, txn: bool) -> list[tuple[int, Variant, str]]:
    """The cells in order: per round every variant, its modes alternating from round to round."""
    cells = []
    for r in range(rounds):
        for v in variants:
            modes = (*v.modes, TXN_MODE) if txn and v.name == "course" else v.modes
            cells += [(r, v, m) for m in (modes if r % 2 == 0 else tuple(reversed(modes)))]
    return cells


def run_spin(
    cluster: Cluster,
    variants: tuple[Variant, ...] = VARIANTS,
    rounds: int = 2,
    seconds: float = 4.0,
    warm_s: float = 1.5,
    txn: bool = False,
    say: Any = print,
) -> list[dict[str, Any]]:
    """Every cell of :func:`plan`, one row each (variant, mode, round and :func:`_figures`)."""
    bootstrap = cluster.bootstrap_servers()
    meter = CpuMeter.of(cluster, os.getpid())
    topics: dict[int, str] = {}
    rows: list[dict[str, Any]] = []
    try:
        for r, v, mode in plan(variants, rounds, txn):
            w = workload(v, mode)
            if w.partitions not in topics:
                topics[w.partitions] = f"spin-p{w.partitions}-{uuid.uuid4().hex[:6]}"
                cluster.admin.create_topic(topics[w.partitions], partitions=w.partitions, config=TOPIC_CONFIG)
            row = measure_cell(bootstrap, topics[w.partitions], w, warm_s, seconds, meter, v.conf)
            rows.append({"variant": v.name, "round": r, **row})
            say(f"  round {r + 1} {v.name:<10} {mode:<11} {row['records_per_s']:>8.0f} records/s")
            _trim(cluster, topics[w.partitions], w.partitions)
    finally:
        delete_topics(cluster, topics.values())
    return rows


def chosen(names: str | None) -> tuple[Variant, ...]:
    """The variants a comma-separated list names (all by default)."""
    if not names:
        return VARIANTS
    by_name = {v.name: v for v in VARIANTS}
    unknown = [n for n in names.split(",") if n not in by_name]
    if unknown:
        raise BenchError(f"Unknown variant {', '.join(unknown)}: use some of {','.join(by_name)}.")
    return tuple(by_name[n] for n in names.split(","))


def bench_spin(
    cluster: Cluster,
    variants: tuple[Variant, ...] = VARIANTS,
    rounds: int = 2,
    seconds: float = 4.0,
    txn: bool = False,
    root: str | None = None,
) -> int:
    """Measure, print the table and its sentences, and keep the rows as ``runs/spin-<run_id>/spin.parquet``."""
    import pandas as pd

    from eoslab.runs import new_run_id, runs_dir
    from tools.kitbench import _spin_report

    cells = plan(variants, rounds, txn)
    print(f"spin probe: {len(cells)} cells of {seconds:g} s measured, about {len(cells) * (seconds + 2.5):.0f} s")
    load0, t0 = os.getloadavg()[0], time.monotonic()
    rows = run_spin(cluster, variants, rounds, seconds, txn=txn)
    t = _spin_report.table(rows)
    for line in [*_spin_report.lines(t), *(f"- {s}" for s in _spin_report.verdicts(t))]:
        print(line)
    folder = runs_dir(root) / f"spin-{new_run_id()}"
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(folder / "spin.parquet", index=False)
    print(
        f"written to {folder}; wall time {time.monotonic() - t0:.0f} s, load {load0:.1f} at start, "
        f"{os.getloadavg()[0]:.1f} at the end"
    )
    return 0
