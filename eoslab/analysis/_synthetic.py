"""Generated runs: the same four Parquet tables a real run writes, from a seeded model.

For unit tests (no cluster, no JVM for the data) and for timing the analysis over a
class-sized collection. The model is deliberately simple and KNOWN, so tests can
assert that the analysis recovers it: each mode's throughput is the baseline times
(1 − its overhead), latencies are log-normal around a per-mode median.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from eoslab.runs import MATRICES, Workload, write_run

TRUE_OVERHEAD = {"acks1": -0.30, "acks_all": 0.0, "idempotent": 0.01, "transactional": 0.05}
ACK_MEDIAN_MS = {"acks1": 3.0, "acks_all": 6.0, "idempotent": 6.5, "transactional": 9.0}


def _label_overhead(w: Workload) -> float:
    extra = 0.2 / (w.commit_ms or 100) if w.transactional else 0.0  # shorter intervals cost more
    return TRUE_OVERHEAD[w.mode] + extra


def generate_run(
    folder: Path,
    *,
    seed: int,
    learner: str = "learner",
    samples_per_workload: int = 500,
    noise: float = 0.0,
    java_peer: bool = True,
) -> Path:
    """One run folder of the default matrix's workloads with known throughputs and latencies."""
    rng = np.random.default_rng(seed)
    run_id = folder.name
    base = 12_000.0 * (1 + rng.uniform(-0.3, 0.3))  # laptops differ; within-run ratios should not
    params, summary, frames = [], [], []
    for i, w in enumerate(MATRICES["default"].workloads):
        params.append({"run_id": run_id, "workload": i, "repeat": 0, **w.record()})
        rps = base * (1 - _label_overhead(w)) * (1 + rng.normal(0, noise))
        row = {
            "run_id": run_id,
            "workload": i,
            "label": w.label,
            "mode": w.mode,
            "commit_ms": float(w.commit_ms) if w.commit_ms else np.nan,
            "phase": "saturation",
            "records": w.count,
            "seconds": w.count / rps,
            "records_per_s": rps,
            "mb_per_s": rps * w.record_size / 2**20,
            "errors": 0,
        }
        summary.append({**row, "client": "eoslab"})
        if java_peer:
            jrps = rps / 0.95
            summary.append(
                {
                    **row,
                    "client": "java",
                    "seconds": w.count / jrps,
                    "records_per_s": jrps,
                    "mb_per_s": jrps * w.record_size / 2**20,
                }
            )
        n = samples_per_workload
        ack = rng.lognormal(np.log(ACK_MEDIAN_MS[w.mode]), 0.4, n)
        ru = ack + rng.lognormal(np.log(5.0), 0.3, n)
        rc = ru + (rng.uniform(0, w.commit_ms, n) if w.commit_ms else 0.0)  # waits for the commit marker
        for kind, vals in (("ack", ack), ("e2e_read_committed", rc), ("e2e_read_uncommitted", ru)):
            frames.append(
                pd.DataFrame(
                    {
                        "run_id": run_id,
                        "workload": i,
                        "label": w.label,
                        "kind": kind,
                        "seq": np.arange(n),
                        "latency_ms": vals,
                    }
                )
            )
    env = {
        "run_id": run_id,
        "learner": learner,
        "started_at": pd.Timestamp("2026-01-01", tz="UTC"),
        "matrix": "synthetic",
        "cpu": "generated",
        "cores": 2,
        "memory_gib": 8.0,
        "os": "generated",
        "python": "3",
        "kafka_version": "4.1.2",
        "client": "confluent-kafka",
        "client_version": "0",
        "librdkafka_version": "0",
        "java": "none",
        "backend": "generated",
        "load1_at_start": 0.0,
        "wall_s": 0.0,
    }
    return write_run(folder, params, summary, pd.concat(frames, ignore_index=True), env)


def generate_class(root: Path, learners: int, runs_each: int = 1, *, seed: int = 0, **kw: object) -> list[Path]:
    """``root/<learner>/<run>/`` for a class, as an instructor collects it."""
    out = []
    for li in range(learners):
        for r in range(runs_each):
            folder = root / f"learner{li:02d}" / f"run{r:02d}"
            out.append(generate_run(folder, seed=seed + 1000 * li + r, learner="jovyan", **kw))  # type: ignore[arg-type]
    return out
