"""``python -m tools.kitbench analyse``: the analysis timing itself. Module 06's whole analysis over the real runs
and a class-sized set of generated ones (target in :mod:`tools.kitbench.targets`), with the kit/Java
ratio per mode. A benchmark of the kit."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from eoslab.analysis import (
    compare,
    e2e_by_commit_interval,
    generate_class,
    kit_vs_java,
    latency_percentiles,
    load_runs,
    overhead,
    overhead_spread,
    spark_session,
    throughput,
)
from eoslab.runs import describe_machine, run_folders, runs_dir
from tools.kitbench.targets import ANALYSIS_RUNS, ANALYSIS_S

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def analyse_all(spark: SparkSession, root: Path) -> dict[str, object]:
    """Every figure of notebook 06, collected to pandas (so the timing includes the work)."""
    runs = load_runs(spark, root)
    ov = overhead(runs.summary).cache()  # the bootstrap is the heavy part: once for both tables
    per_run = ov.toPandas()
    assert isinstance(per_run, pd.DataFrame)
    spread = overhead_spread(ov).toPandas()
    e2e = e2e_by_commit_interval(runs.samples, runs.params).toPandas()
    ov.unpersist()
    return {
        "throughput": throughput(runs.summary).toPandas(),
        "overhead": per_run,
        "spread": spread,
        "ack": latency_percentiles(runs.samples).toPandas(),
        "e2e": e2e,
        "java": kit_vs_java(runs.summary).toPandas(),
        "published": compare(per_run.groupby("label", as_index=False)[["median", "lo", "hi"]].median(), e2e),
    }


def bench_analyse(root: str | Path | None = None, synthetic: int = ANALYSIS_RUNS) -> int:
    print(f"python -m tools.kitbench analyse on {describe_machine()}")
    t0 = time.monotonic()
    spark = spark_session(kafka=False)
    print(f"Spark session: {time.monotonic() - t0:.1f} s")
    path = runs_dir(root)
    if run_folders(path):
        t0 = time.monotonic()
        out = analyse_all(spark, path)
        print(f"{len(run_folders(path))} real run(s) under {path}: {time.monotonic() - t0:.1f} s")
        java = out["java"]
        assert isinstance(java, pd.DataFrame)
        if len(java):
            print("harness / kafka-producer-perf-test throughput, per mode (median over runs):")
            print(java.groupby("label")["ratio"].median().round(2).to_string())
    if synthetic:
        with tempfile.TemporaryDirectory() as tmp:
            generate_class(Path(tmp), learners=synthetic // 2 or 1, runs_each=2 if synthetic > 1 else 1)
            t0 = time.monotonic()
            analyse_all(spark, Path(tmp))
            secs = time.monotonic() - t0
        flag = "ok" if secs <= ANALYSIS_S else "OVER TARGET"
        print(f"analysis over {synthetic} generated runs: {secs:.1f} s   target ≤ {ANALYSIS_S:g} s  {flag}")
    spark.stop()
    return 0
