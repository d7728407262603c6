"""``eoslab bench producers``: what idempotence and transactions cost, measured on the real cluster.

Each workload (a producer mode with explicit batching) runs in three steps, each on a
fresh topic that is deleted afterwards: the kit's harness at saturation, Kafka's own
ProducerPerformance with the same settings (the peer, so every throughput figure has
a ratio measured in the same run), and the harness at a fixed offered load for latency.
The run is written under ``runs/<run_id>/`` as Parquet, in the format of :mod:`eoslab.runs`.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eoslab.bench import _harness
from eoslab.bench._harness import BenchError
from eoslab.bench._peer import TXN_NOTE, PeerResult, run_peer
from eoslab.bench.targets import HARNESS_VS_JAVA_RATIO
from eoslab.cluster import Cluster, connect
from eoslab.runs import BASELINE, Matrix, Workload, fingerprint, matrix, new_run_id, run_folders, runs_dir, write_run

__all__ = ["BenchError", "ensure_runs", "run_matrix", "summary_text"]


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _fixed_row(run_id: str, i: int, w: Workload, s: _harness.LatencySamples) -> dict[str, Any]:
    by_kind: dict[str, list[float]] = {}
    for kind, ms in zip(s.kind, s.latency_ms, strict=False):
        by_kind.setdefault(kind, []).append(ms)
    row: dict[str, Any] = {
        "run_id": run_id,
        "workload": i,
        "label": w.label,
        "mode": w.mode,
        "commit_ms": w.commit_ms,
        "client": "eoslab",
        "phase": "fixed_load",
        "records": s.offered,
        "seconds": s.seconds,
        "records_per_s": s.offered / s.seconds if s.seconds else float("nan"),
        "mb_per_s": s.offered * w.record_size / 2**20 / s.seconds if s.seconds else float("nan"),
        "errors": s.errors,
    }
    for kind in ("ack", "e2e_read_committed", "e2e_read_uncommitted"):
        vals = by_kind.get(kind, [])
        row[f"{kind}_n"] = len(vals)
        for q in (50, 95, 99):
            row[f"{kind}_p{q}_ms"] = _pct(vals, q)
    return row


def _sat_row(
    run_id: str,
    i: int,
    w: Workload,
    client: str,
    records: int,
    seconds: float,
    p50: float = float("nan"),
    p99: float = float("nan"),
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "workload": i,
        "label": w.label,
        "mode": w.mode,
        "commit_ms": w.commit_ms,
        "client": client,
        "phase": "saturation",
        "records": records,
        "seconds": seconds,
        "records_per_s": records / seconds if seconds else float("nan"),
        "mb_per_s": records * w.record_size / 2**20 / seconds if seconds else float("nan"),
        "errors": 0,
        "ack_p50_ms": p50,
        "ack_p99_ms": p99,
    }


def _topic(cluster: Cluster, run_id: str, w: Workload, phase: str) -> str:
    name = f"bench-{run_id}-{w.label}-{phase}-{uuid.uuid4().hex[:6]}".replace("_", "-")
    cluster.admin.create_topic(name, partitions=w.partitions)
    return name


def run_matrix(
    cluster: Cluster, m: Matrix | str = "default", root: str | Path | None = None, progress: bool = True
) -> Path:
    """Run every workload of the matrix and write one run folder; returns its path."""
    from tqdm.auto import tqdm

    m = matrix(m) if isinstance(m, str) else m
    run_id = new_run_id()
    folder = runs_dir(root) / run_id
    env = fingerprint(run_id, cluster.backend.name, m.name)
    bootstrap = cluster.bootstrap_servers()
    total = sum(w.count * (2 if m.java_peer else 1) + int(w.rate * w.duration_s) for w in m.workloads) * m.repeats
    params, summary, frames = [], [], []
    bar = tqdm(total=total, unit="rec", unit_scale=True, disable=not progress, desc="bench", leave=False)
    t_start = time.monotonic()
    try:
        for rep in range(m.repeats):
            for i0, w in enumerate(m.workloads):
                i = rep * len(m.workloads) + i0
                params.append({"run_id": run_id, "workload": i, "repeat": rep, **w.record()})
                made = []
                try:
                    bar.set_description(f"{w.label}: saturation")
                    made.append(t := _topic(cluster, run_id, w, "sat"))
                    sat = _harness.saturation(bootstrap, t, w, tick=bar.update)
                    summary.append(_sat_row(run_id, i, w, "eoslab", sat.records, sat.seconds))
                    if m.java_peer:
                        bar.set_description(f"{w.label}: java peer")
                        made.append(t := _topic(cluster, run_id, w, "java"))
                        peer: PeerResult | None = run_peer(cluster, w, t)
                        bar.update(w.count)
                        if peer is not None:
                            summary.append(
                                _sat_row(run_id, i, w, "java", peer.records, peer.seconds, peer.p50_ms, peer.p99_ms)
                            )
                    bar.set_description(f"{w.label}: {w.rate}/s fixed load")
                    made.append(t := _topic(cluster, run_id, w, "lat"))
                    lat = _harness.fixed_load(bootstrap, t, w, tick=bar.update)
                    summary.append(_fixed_row(run_id, i, w, lat))
                    frames.append(
                        pd.DataFrame(
                            {
                                "run_id": run_id,
                                "workload": i,
                                "label": w.label,
                                "kind": lat.kind,
                                "seq": lat.seq,
                                "latency_ms": lat.latency_ms,
                            }
                        )
                    )
                finally:
                    for t in made:
                        try:
                            cluster.admin.delete_topic(t)
                        except Exception:  # noqa: BLE001 - a leftover topic must not hide the real error
                            pass
    finally:
        bar.close()
    env["wall_s"] = round(time.monotonic() - t_start, 1)
    samples = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=["run_id", "workload", "label", "kind", "seq", "latency_ms"])
    )
    return write_run(folder, params, summary, samples, env)


def ensure_runs(cluster: Cluster | None = None, root: str | Path | None = None, matrix_name: str = "quick") -> Path:
    """The runs folder, with a run of ``matrix_name`` made first if it holds none (notebook 06, lab 06)."""
    path = runs_dir(root)
    if not run_folders(path):
        if cluster is None:
            cluster = connect()
        print(f"No runs under {path}: measuring the {matrix_name!r} matrix first (about a minute).")
        run_matrix(cluster, matrix_name, path)
    return path


def summary_text(folder: Path) -> str:
    """The one-screen summary of a run: harness vs Java, overhead vs acks=all, latency at fixed load."""
    s = pd.read_parquet(folder / "summary.parquet")
    env = pd.read_parquet(folder / "env.parquet").iloc[0]
    sat, fixed = s[s.phase == "saturation"], s[s.phase == "fixed_load"].set_index("label")
    ours = sat[sat.client == "eoslab"].set_index("label")
    java = sat[sat.client == "java"].set_index("label")
    base = ours.records_per_s.get(BASELINE, float("nan"))
    lines = [
        f"run {env.run_id}: {env.cores} cores ({env.cpu}), Kafka {env.kafka_version}, "
        f"librdkafka {env.librdkafka_version}, {env.backend} backend, load {env.load1_at_start} at start, "
        f"{env.get('wall_s', '?')} s",
        "saturation (records/s; 'java' = kafka-producer-perf-test, same settings, same run):",
        f"{'mode':<16}{'eoslab':>10}{'MB/s':>7}{'java':>10}{'ratio':>7}{'overhead':>12}   "
        f"fixed load: ack p50/p99   e2e rc p50/p99   e2e ru p50/p99 (ms)",
    ]
    for label, r in ours.iterrows():
        j = java.records_per_s.get(label, float("nan"))
        ratio = r.records_per_s / j if j == j else float("nan")
        flag = "" if ratio != ratio or ratio >= HARNESS_VS_JAVA_RATIO else f" <{HARNESS_VS_JAVA_RATIO:g}"
        over = 1 - r.records_per_s / base
        f = fixed.loc[label] if label in fixed.index else None
        lat = (
            ""
            if f is None
            else (
                f"   {f.ack_p50_ms:6.1f}/{f.ack_p99_ms:<7.1f}  {f.e2e_read_committed_p50_ms:7.1f}/"
                f"{f.e2e_read_committed_p99_ms:<7.1f}  {f.e2e_read_uncommitted_p50_ms:7.1f}/"
                f"{f.e2e_read_uncommitted_p99_ms:.1f}"
            )
        )
        lines.append(
            f"{label:<16}{r.records_per_s:>10.0f}{r.mb_per_s:>7.1f}{j:>10.0f}{ratio:>7.2f}{flag:<1}{over:>+11.1%}{lat}"
        )
    lines.append("overhead = 1 − throughput / acks_all's throughput in this run (negative: faster than acks_all).")
    lines.append(f"note: {TXN_NOTE}.")
    lines.append("note: a shared 2-core machine makes these figures noisy; compare ratios measured in one run.")
    lines.append(f"written to {folder}")
    return "\n".join(lines)
