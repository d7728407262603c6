"""``eoslab bench producers``: what idempotence and transactions cost, measured on the real cluster.

A run has three parts, each on fresh topics that are deleted afterwards:

0. (before the rounds, not recorded) the brokers' warm-up (:mod:`eoslab.bench._warmup`): rounds of every mode in
   short slices until the brokers' JIT compilers are idle, so that the rounds do not meet a cluster still
   speeding up; one round on a cluster that has worked, a minute or two on a new one;
1. rounds at saturation (:mod:`eoslab.bench._rounds`): one warmed-up producer per mode; every
   round gives each mode a slice of wall time, in an order rotated from round to round
   (A B C …, B C … A, …), so a machine that slows down or speeds up during the run weighs on
   every mode alike, and the spread over rounds gives each figure its interval;
2. Kafka's own ProducerPerformance on the same settings and the same bytes (the peer,
   :mod:`eoslab.bench._peer`), for the baseline or every mode;
3. the harness at a fixed offered load for latency.

The run is written under ``runs/<run_id>/`` as Parquet, in the format of :mod:`eoslab.runs`;
its intervals are computed by ``eoslab.analysis`` (Spark), which ``eoslab bench producers`` prints.
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import statistics
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eoslab.bench import _harness
from eoslab.bench._cpeer import CPeerResult, run_cpeer
from eoslab.bench._cpu import CpuMeter
from eoslab.bench._harness import BenchError
from eoslab.bench._peer import PeerResult, peer_records, run_peer
from eoslab.bench._pin import Pinning, pinned, plan
from eoslab.bench._rounds import TOPIC_CONFIG, run_rounds, sat_row
from eoslab.bench._warmup import WARMUP_SLICE_S
from eoslab.cluster import Cluster, connect
from eoslab.runs import (
    CPEER_CLIENT,
    CPEER_LABELS,
    CPEER_WARMUP_S,
    IDEMPOTENT_NOTE,
    JAVA_WARMUP_S,
    NOT_IN_ROUNDS,
    TXN_NOTE,
    Matrix,
    Workload,
    fingerprint,
    matrix,
    new_run_id,
    run_folders,
    runs_dir,
    summary_row,
    warmup_sentence,
    write_run,
)

__all__ = [
    "CPEER_CLIENT",
    "CPEER_WARMUP_S",
    "BenchError",
    "IDEMPOTENT_NOTE",
    "JAVA_WARMUP_S",
    "TXN_NOTE",
    "ensure_runs",
    "estimate_s",
    "run_matrix",
    "warmup_sentence",
]

SETUP_S = 2.0
"""Per mode, the topic, the producer, its warm-up, the consumers' join: what a run costs beside its slices."""
WARMUP_EXTRA_S = 0.2
"""Per mode and warm-up round, the drain beside its slice."""


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _fixed_row(run_id: str, i: int, w: Workload, s: _harness.LatencySamples) -> dict[str, Any]:
    by_kind: dict[str, list[float]] = {}
    for kind, ms in zip(s.kind, s.latency_ms, strict=False):
        by_kind.setdefault(kind, []).append(ms)
    row = summary_row(
        run_id,
        i,
        w,
        client="eoslab",
        phase="fixed_load",
        round_=NOT_IN_ROUNDS,
        position=-1,
        records=s.offered,
        seconds=s.seconds,
        errors=s.errors,
    )
    for kind in ("ack", "e2e_read_committed", "e2e_read_uncommitted"):
        vals = by_kind.get(kind, [])
        row[f"{kind}_n"] = len(vals)
        for q in (50, 95, 99):
            row[f"{kind}_p{q}_ms"] = _pct(vals, q)
    return row


def _peer_row(run_id: str, i: int, w: Workload, r: PeerResult) -> dict[str, Any]:
    # CPU over the same window as its rate (after its warm-up report), per process kind: like the harness's slices
    row = sat_row(run_id, i, w, "java", r.records, r.seconds, NOT_IN_ROUNDS, -1, cpu=r.cpu)
    row.update(
        ack_p50_ms=r.p50_ms,  # the tool's own, over its whole run: latency at saturation is queueing
        ack_p99_ms=r.p99_ms,
        java_total_records=r.total_records,
        java_total_records_per_s=r.total_records_per_s,  # the tool's printed figure, warm-up included
        java_windows=",".join(f"{x:.0f}" for x in r.windows),
        java_warmup_s=JAVA_WARMUP_S,
        java_still_warming=r.still_warming,
        java_payload=r.payload,
        java_cpu_total_s=r.cpu_s,  # the JVM from start to exit, start-up and JIT included: not a per-record cost
    )
    return row


def _topic(cluster: Cluster, run_id: str, w: Workload, phase: str) -> str:
    name = f"bench-{run_id}-{w.label}-{phase}-{uuid.uuid4().hex[:6]}".replace("_", "-")
    # deleted after its phase: its files leave the disk a second later (TOPIC_CONFIG), not a minute later
    cluster.admin.create_topic(name, partitions=w.partitions, config=TOPIC_CONFIG)
    return name


PEAK_WRITE_BPS = 150e6
"""Bytes per second the fastest mode writes at saturation on a fast laptop (about 120 MB/s measured here)."""
RETENTION_LAG_S = 11.0
"""After a slice's DeleteRecords, its segments leave the disk at the next retention check
(``log.retention.check.interval.ms`` = 10 s in the topology) plus ``file.delete.delay.ms`` (1 s)."""


def disk_needed(m: Matrix) -> float:
    """Bytes of free disk a run of ``m`` can fill at its peak, before trimmed records leave (3 replicas)."""
    longest = max(
        max((m.slice_s(w) for w in m.workloads), default=0.0) + RETENTION_LAG_S,
        (JAVA_WARMUP_S + m.java_seconds + 1.0) if m.peer_workloads() else 0.0,
    )
    return PEAK_WRITE_BPS * 3 * longest


def check_disk(cluster: Cluster, m: Matrix) -> None:
    """Refuse, in one sentence, a run the disk under the cluster's data cannot hold (local backend; the
    docker backend's volumes live where the engine keeps them)."""
    if cluster.backend.name != "local":
        return
    from eoslab._paths import data_dir

    folder = data_dir()
    free = shutil.disk_usage(folder if folder.exists() else folder.parent).free
    need = disk_needed(m)
    if free < need:
        raise BenchError(
            f"Only {free / 1e9:.1f} GB are free on the disk holding {folder}, and this run can fill up to "
            f"{need / 1e9:.1f} GB before its trimmed records leave: free some space, or run fewer --seconds "
            f"per slice / --java-seconds."
        )


def estimate_s(m: Matrix, c_peer: bool = False) -> float:
    """The wall time a run of ``m`` should take on a quiet 2-core laptop (printed before it starts); with
    ``c_peer``, rdkafka_performance's runs too (not its one-time build)."""
    peers = m.peer_workloads()
    java = len(peers) * (3.0 + JAVA_WARMUP_S + m.java_seconds)  # a JVM start, its warm-up report, the stretch
    fixed = sum(w.duration_s + 1.0 for w in m.workloads)
    c = len(cpeer_workloads(m)) * (1.0 + CPEER_WARMUP_S + m.java_seconds) if c_peer else 0.0
    warm = (WARMUP_SLICE_S + WARMUP_EXTRA_S) * len(m.workloads) if m.warmup_max_s > 0 else 0.0  # one round
    return m.rounds * m.round_s + java + c + fixed + SETUP_S * len(m.workloads) + warm


def cpeer_workloads(m: Matrix) -> list[Workload]:
    """The workloads librdkafka's rdkafka_performance measures: the baseline and idempotence (it has no
    transactions)."""
    return [w for w in m.workloads if w.label in CPEER_LABELS]


def _cpeer_row(run_id: str, i: int, w: Workload, r: CPeerResult) -> dict[str, Any]:
    row = sat_row(run_id, i, w, CPEER_CLIENT, r.records, r.seconds, NOT_IN_ROUNDS, -1, cpu=r.cpu)
    st = r.stats
    row.update(
        cpeer_librdkafka_version=r.version,
        cpeer_warmup_s=CPEER_WARMUP_S,
        cpeer_broker_threads_us_per_record=r.threads.get("broker_threads", float("nan")) / r.records * 1e6
        if r.records
        else float("nan"),
        cpeer_wakeups_per_record=st.wakeups_per_record if st is not None else float("nan"),
    )
    return row


def _measure_cpeers(
    cluster: Cluster, m: Matrix, run_id: str, index: dict[str, int], summary: list[dict[str, Any]], bar: Any
) -> None:
    """librdkafka's rdkafka_performance on the baseline and idempotence, for ``m.java_seconds`` after its
    warm-up; its rows are appended to ``summary``."""
    from eoslab._progress import advance
    from eoslab.bench import _cbuild

    program = _cbuild.build()
    version = _cbuild.version(program)
    meter = CpuMeter.of(cluster, None) if cluster.backend.name == "local" else None
    for w in cpeer_workloads(m):
        bar.set_description(f"{w.label}: librdkafka's rdkafka_performance")
        t = _topic(cluster, run_id, w, "c")
        try:
            r = run_cpeer(program, version, w, t, cluster.bootstrap_servers(), m.java_seconds, meter)
        finally:
            cluster.admin.delete_topic(t)
        advance(bar, 1.0 + CPEER_WARMUP_S + m.java_seconds)
        summary.append(_cpeer_row(run_id, index[w.label], w, r))


def _fastest(peer: PeerResult) -> float:
    """The tool's rate in a mode, after its warm-up or else its own total (NaN left out): 0 when it has none."""
    rates = [r for r in (peer.records_per_s, peer.total_records_per_s) if not math.isnan(r)]
    return max(rates, default=0.0)


def _measure_peers(
    cluster: Cluster, m: Matrix, run_id: str, index: dict[str, int], summary: list[dict[str, Any]], bar: Any
) -> None:
    """Kafka's producer-perf-test on each peer workload, sending as many records as the harness's median
    rate in the rounds would in the peer's time, and at least as many as keep the tool past its warm-up at
    the fastest rate it has shown in the run (:func:`peer_records`); its rows are appended to ``summary``."""
    from eoslab._progress import advance

    meter = CpuMeter.of(cluster, None)  # the nodes; the tool's JVM is added when it starts
    fastest = 0.0
    for w in m.peer_workloads():
        bar.set_description(f"{w.label}: Kafka's producer-perf-test")
        rates = [r["records_per_s"] for r in summary if r["label"] == w.label]
        records = peer_records(w, statistics.median(rates), m.java_seconds, fastest)
        t = _topic(cluster, run_id, w, "java")
        try:
            peer = run_peer(cluster, w, t, records, meter=meter)
        finally:
            cluster.admin.delete_topic(t)
        advance(bar, 3.0 + JAVA_WARMUP_S + m.java_seconds)
        if peer is not None:
            fastest = max(fastest, _fastest(peer))
            summary.append(_peer_row(run_id, index[w.label], w, peer))


def _measure_fixed_load(
    cluster: Cluster, bootstrap: str, m: Matrix, run_id: str, index: dict[str, int], bar: Any
) -> tuple[list[dict[str, Any]], list[pd.DataFrame]]:
    """Each workload at its fixed offered load: its summary row (latency percentiles) and its samples."""
    from eoslab._progress import advance

    rows: list[dict[str, Any]] = []
    frames: list[pd.DataFrame] = []
    for w in m.workloads:
        bar.set_description(f"{w.label}: {w.rate}/s fixed load")
        t = _topic(cluster, run_id, w, "lat")
        try:
            lat = _harness.fixed_load(bootstrap, t, w)
        finally:
            cluster.admin.delete_topic(t)
        advance(bar, w.duration_s + 1.0)
        rows.append(_fixed_row(run_id, index[w.label], w, lat))
        frames.append(
            pd.DataFrame(
                {
                    "run_id": run_id,
                    "workload": index[w.label],
                    "label": w.label,
                    "kind": lat.kind,
                    "seq": lat.seq,
                    "latency_ms": lat.latency_ms,
                }
            )
        )
    return rows, frames


def _samples(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The latency samples of every workload as one table (an empty one with the columns when none ran)."""
    if frames:
        return pd.concat(frames, ignore_index=True)
    return pd.DataFrame(columns=["run_id", "workload", "label", "kind", "seq", "latency_ms"])


def run_matrix(
    cluster: Cluster,
    m: Matrix | str = "default",
    root: str | Path | None = None,
    progress: bool = True,
    c_peer: bool = False,
    pin: bool = False,
) -> Path:
    """Measure every workload of the matrix and write one run folder; returns its path. ``c_peer``: also
    librdkafka's own rdkafka_performance (built once) on the baseline and idempotence; ``pin``: the client on
    cores of its own, the cluster's nodes on the others (:mod:`eoslab.bench._pin`, local backend)."""
    from tqdm import tqdm

    from eoslab._progress import progress_bar

    m = matrix(m) if isinstance(m, str) else m
    check_disk(cluster, m)
    run_id = new_run_id()
    folder = runs_dir(root) / run_id
    env = fingerprint(run_id, cluster.backend.name, m.name, m.rounds, m.seconds)
    env["java_peer"] = m.java_peer
    env["c_peer"] = c_peer
    pinning = _pinning(cluster) if pin else None
    env["pinned"] = pinning.describe() if pinning else ""
    bootstrap = cluster.bootstrap_servers()
    index = {w.label: i for i, w in enumerate(m.workloads)}
    params = [
        {"run_id": run_id, "workload": i, **w.record(), "rounds": m.rounds, "slice_s": m.slice_s(w)}
        for i, w in enumerate(m.workloads)
    ]
    bar = progress_bar("bench", total=estimate_s(m, c_peer), unit="s", delay=0.0) if progress else tqdm(disable=True)
    t_start = time.monotonic()
    nodes = [st.pid for st in cluster.status() if st.pid] if pinning else []
    with pinned(nodes, pinning) if pinning else contextlib.nullcontext(), _closing(bar):
        summary, warm = run_rounds(cluster, m, run_id, bar)
        env.update(warm.env())
        _measure_peers(cluster, m, run_id, index, summary, bar)
        if c_peer:
            _measure_cpeers(cluster, m, run_id, index, summary, bar)
        fixed, frames = _measure_fixed_load(cluster, bootstrap, m, run_id, index, bar)
        summary += fixed
    env["wall_s"] = round(time.monotonic() - t_start, 1)
    return write_run(folder, params, summary, _samples(frames), env)


@contextlib.contextmanager
def _closing(bar: Any) -> Iterator[None]:
    try:
        yield
    finally:
        bar.close()


def _pinning(cluster: Cluster) -> Pinning:
    """The CPUs of ``--pin`` for this machine, or one sentence saying why not."""
    if cluster.backend.name != "local":
        raise BenchError("--pin pins this machine's processes: it needs the local backend (run without --pin).")
    return plan(os.sched_getaffinity(0))


def ensure_runs(cluster: Cluster | None = None, root: str | Path | None = None, matrix_name: str = "quick") -> Path:
    """The runs folder, with a run of ``matrix_name`` made first if it holds none (notebook 06, lab 06)."""
    path = runs_dir(root)
    if not run_folders(path):
        if cluster is None:
            cluster = connect()
        m = matrix(matrix_name)
        print(f"No runs under {path}: measuring the {matrix_name!r} matrix first (about {estimate_s(m):.0f} s).")
        run_matrix(cluster, m, path)
    return path
