"""Generated runs: the same four Parquet tables a real run writes (runs format 2), from a seeded model.

For unit tests (no cluster, no JVM for the data), for timing the analysis over a class-sized
collection, and for lab 06's held-out data. The model is deliberately simple and KNOWN, so tests
can assert that the analysis recovers it:

* a run has a laptop speed (``base``, ±30 %), and every round a drift factor shared by all modes of
  that round (``drift``: the machine got busier or quieter) — within-round ratios cancel it;
* each slice has its own noise (``noise``), which nothing cancels: it is what the intervals are for;
* each mode's throughput is the round's speed × (1 − its overhead); the Java peer runs at the mode's
  median rate ÷ :data:`JAVA_RATIO`, outside the rounds (``round`` −1), as do the fixed-load rows and,
  when asked (``c_peer_ratio``), librdkafka's rdkafka_performance on acks_all and idempotent (``--c-peer``);
* latencies are log-normal around a per-mode median, scaled per run (``latency_scale``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eoslab.runs import CPEER_CLIENT, CPEER_LABELS, FORMAT, MATRICES, NOT_IN_ROUNDS, Workload, summary_row, write_run
from eoslab.topology import KAFKA_VERSION

TRUE_OVERHEAD = {"acks1": -0.30, "acks_all": 0.0, "idempotent": 0.01, "transactional": 0.05}
ACK_MEDIAN_MS = {"acks1": 3.0, "acks_all": 6.0, "idempotent": 6.5, "transactional": 9.0}
JAVA_RATIO = 0.95
"""The harness's rate over the Java peer's in generated runs."""


def true_overhead(w: Workload) -> float:
    """The model's overhead of a workload against acks_all (shorter commit intervals cost more)."""
    extra = 0.2 / (w.commit_ms or 100) if w.transactional else 0.0
    return TRUE_OVERHEAD[w.mode] + extra


def _env(run_id: str, learner: str, rounds: int) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "format": FORMAT,
        "learner": learner,
        "started_at": pd.Timestamp("2026-01-01", tz="UTC"),
        "matrix": "synthetic",
        "rounds": rounds,
        "seconds": 2.0,
        "cpu": "generated",
        "cores": 2,
        "memory_gib": 8.0,
        "os": "generated",
        "python": "3",
        "kafka_version": KAFKA_VERSION,
        "client": "confluent-kafka",
        "client_version": "0",
        "librdkafka_version": "0",
        "java": "none",
        "backend": "generated",
        "load1_at_start": 0.0,
        "wall_s": 0.0,
    }


def _row(
    run_id: str, i: int, w: Workload, client: str, phase: str, rnd: int, pos: int, rps: float, secs: float
) -> dict[str, Any]:
    commits = int(secs * 1000 / (2 * w.commit_ms)) if w.commit_ms else 0
    return summary_row(
        run_id,
        i,
        w,
        client=client,
        phase=phase,
        round_=rnd,
        position=pos,
        records=int(rps * secs),
        seconds=secs,
        commits=commits,
        records_per_s=rps,
    )


def _saturation(
    run_id: str,
    workloads: list[Workload],
    over: dict[str, float],
    rng: np.random.Generator,
    *,
    seed: int,
    base: float,
    rounds: int,
    noise: float,
    drift: float,
) -> tuple[list[dict[str, Any]], dict[str, list[float]]]:
    """The rounds' rows, each round every workload once (the order rotated by one a round, as the bench
    does), and each workload's rates (its Java peer runs at their median)."""
    summary: list[dict[str, Any]] = []
    rates: dict[str, list[float]] = {w.label: [] for w in workloads}
    # A slice's timer runs to its last ack, so slices differ in length (their own generator: the figures above
    # stay those of the same seed).
    lengths = np.random.default_rng(seed + 1_000_003)
    for r in range(rounds):
        speed = base * float(np.exp(rng.normal(0, drift)))
        k = r % len(workloads)
        for pos, (i, w) in enumerate((list(enumerate(workloads)))[k:] + list(enumerate(workloads))[:k]):
            rps = speed * (1 - over[w.label]) * (1 + rng.normal(0, noise))
            rates[w.label].append(rps)
            secs = 2.0 * (1 + float(lengths.uniform(0, 0.25)))
            summary.append(_row(run_id, i, w, "eoslab", "saturation", r, pos, rps, secs))
    return summary, rates


def _commit_wait(rng: np.random.Generator, commit_ms: float, n: int, sigma: float) -> Any:
    """A read_committed record's wait for its commit marker. Uniform over the interval (sigma 0), or
    log-normal with the same median (half the interval) and a right tail (sigma > 0): a slow commit holds
    every record of its transaction back, so the mean lies well above the median."""
    if sigma <= 0:
        return rng.uniform(0, commit_ms, n)
    return rng.lognormal(np.log(commit_ms / 2), sigma, n)


def _latencies(
    run_id: str,
    i: int,
    w: Workload,
    rng: np.random.Generator,
    n: int,
    scale: float,
    fixed: dict[str, Any],
    commit_wait_sigma: float = 0.0,
) -> list[pd.DataFrame]:
    """Workload ``i``'s latency samples of each kind; their percentiles go into its fixed-load row ``fixed``."""
    ack = rng.lognormal(np.log(ACK_MEDIAN_MS[w.mode] * scale), 0.4, n)
    ru = ack + rng.lognormal(np.log(5.0 * scale), 0.3, n)
    # read_committed waits for the commit marker
    rc = ru + (_commit_wait(rng, w.commit_ms, n, commit_wait_sigma) if w.commit_ms else 0.0)
    frames = []
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
        for q in (50, 95, 99):
            fixed[f"{kind}_p{q}_ms"] = float(np.percentile(vals, q))
    return frames


def generate_run(
    folder: Path,
    *,
    seed: int,
    learner: str = "learner",
    rounds: int = 5,
    samples_per_workload: int = 500,
    noise: float = 0.0,
    drift: float = 0.0,
    java_peer: bool = True,
    java_ratio: float | Mapping[str, float] = JAVA_RATIO,
    latency_scale: float = 1.0,
    overheads: dict[str, float] | None = None,
    commit_wait_sigma: float = 0.0,
    c_peer_ratio: Mapping[str, float] | None = None,
) -> Path:
    """One run folder of the default matrix's workloads with known throughputs and latencies.

    ``overheads`` replaces the model's overhead of some labels (``{"txn_100ms": 0.10}``). ``java_ratio`` is
    one ratio for every mode, or one per label: a Java client that is faster by another margin in each mode.
    With one ratio, the Java rows of two modes have exactly the ratio of the harness's medians.
    ``commit_wait_sigma`` > 0 gives read_committed's wait for the commit marker a right tail (see
    :func:`_commit_wait`); 0 keeps the uniform wait, whose end-to-end latency is near-symmetric.
    ``c_peer_ratio``: the harness's rate over rdkafka_performance's per label, for the labels it measures (acks_all
    and idempotent; None: no such rows, as in a run without ``--c-peer``).
    """
    rng = np.random.default_rng(seed)
    run_id = folder.name
    workloads = list(MATRICES["default"].workloads)
    base = 12_000.0 * (1 + rng.uniform(-0.3, 0.3))  # laptops differ; within-round ratios should not
    over = {w.label: (overheads or {}).get(w.label, true_overhead(w)) for w in workloads}
    java = java_ratio if isinstance(java_ratio, Mapping) else {w.label: java_ratio for w in workloads}
    params = [
        {"run_id": run_id, "workload": i, **w.record(), "rounds": rounds, "slice_s": 2.0}
        for i, w in enumerate(workloads)
    ]
    summary, rates = _saturation(
        run_id, workloads, over, rng, seed=seed, base=base, rounds=rounds, noise=noise, drift=drift
    )
    frames = []
    for i, w in enumerate(workloads):
        if java_peer:
            peer_rps = float(np.median(rates[w.label])) / java[w.label]
            summary.append(_row(run_id, i, w, "java", "saturation", NOT_IN_ROUNDS, -1, peer_rps, 6.0))
        if c_peer_ratio is not None and w.label in CPEER_LABELS:
            c_rps = float(np.median(rates[w.label])) / c_peer_ratio[w.label]
            summary.append(_row(run_id, i, w, CPEER_CLIENT, "saturation", NOT_IN_ROUNDS, -1, c_rps, 6.0))
        fixed = _row(run_id, i, w, "eoslab", "fixed_load", NOT_IN_ROUNDS, -1, float(w.rate), w.duration_s)
        summary.append(fixed)
        frames += _latencies(run_id, i, w, rng, samples_per_workload, latency_scale, fixed, commit_wait_sigma)
    return write_run(folder, params, summary, pd.concat(frames, ignore_index=True), _env(run_id, learner, rounds))


def generate_class(root: Path, learners: int, runs_each: int = 1, *, seed: int = 0, **kw: Any) -> list[Path]:
    """``root/<learner>/<run>/`` for a class, as an instructor collects it."""
    out = []
    for li in range(learners):
        for r in range(runs_each):
            folder = root / f"learner{li:02d}" / f"run{r:02d}"
            out.append(generate_run(folder, seed=seed + 1000 * li + r, learner="jovyan", **kw))
    return out
