"""Lab 06's held-out data: runs the check makes up at run time, with the traps a real class's runs have.

A learner's own runs (the quick matrix) have no Java rows, one run and equal lengths: an answer
that mixes in the Java tool's rows, pools runs, or pairs nothing would pass on them. The held-out
runs have all of it, drawn from a fresh seed at every check, so neither a constant nor a copy of
the notebook's helpers passes:

* runs of unequal length (3 to 8 rounds; 250 to 4,000 latency samples per mode) on laptops of
  different speed (±30 %) and latency (× 1 to × 6);
* slices of uneven length (a slice's timer runs to its last ack), so a slice's ``records`` is not its rate;
* a machine that drifts from round to round (a factor shared by every mode of a round), so a
  ratio taken within a round differs from a ratio of medians;
* Kafka's Java tool beside every mode (``client`` ``java``, ``round`` −1) at a rate far from the
  harness's, and the fixed-load rows (``phase`` ``fixed_load``, ``round`` −1).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from eoslab.analysis import Runs, generate_run, load_runs, spark_session


def heldout(seed: int | None = None) -> tuple[Path, int]:
    """A fresh folder of held-out runs and the seed it was drawn from (a new one per call by default)."""
    seed = int(np.random.default_rng().integers(2**31)) if seed is None else seed
    rng = np.random.default_rng(seed)
    root = Path(tempfile.mkdtemp(prefix="eoslab-heldout-"))
    scales = rng.permutation([1.0, 2.0, 6.0])  # the median run is the middle one, the mean is pulled up
    counts = rng.permutation([4000, 250, 400])  # the pooled percentile follows the longest run
    for i, (rounds, scale, n) in enumerate(zip(rng.permutation([3, 5, 8]), scales, counts, strict=True)):
        overheads: dict[str, Any] = {
            "idempotent": float(rng.uniform(0.05, 0.25)),
            "txn_20ms": float(rng.uniform(0.35, 0.55)),
            "txn_100ms": float(rng.uniform(0.2, 0.35)),
            "txn_500ms": float(rng.uniform(0.1, 0.2)),
        }
        generate_run(
            root / f"learner{i}" / f"run{i}",
            seed=seed + i,
            learner=f"learner{i}",
            rounds=int(rounds),
            samples_per_workload=int(n),
            noise=0.04,
            drift=0.35,
            java_ratio=float(rng.uniform(0.4, 0.6)),
            latency_scale=float(scale),
            overheads=overheads,
        )
    return root, seed


def load(root: Path) -> Runs:
    """The held-out runs as the learner's code sees its own: Spark DataFrames."""
    return load_runs(spark_session(kafka=False), root)
