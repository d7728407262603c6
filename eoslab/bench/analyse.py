"""``eoslab bench analyse``: module 06's whole analysis, timed, over the real runs and a class-sized
set of generated ones (target: 100 runs in ≤ 30 s on 2 cores), with the kit/Java ratio per mode."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from eoslab.bench._record import run_folders, runs_dir

TARGET_S = 30.0


def analyse_all(spark: object, root: Path) -> dict[str, object]:
    """Every figure of notebook 06, collected to pandas (so the timing includes the work)."""
    from eoslab import analysis as A

    runs = A.load_runs(spark, root)  # type: ignore[arg-type]
    spread = A.overhead_spread(A.overhead(runs.summary)).toPandas()
    e2e = A.e2e_by_commit_interval(runs.samples, runs.params).toPandas()
    return {
        "throughput": A.throughput(runs.summary).toPandas(),
        "overhead": spread,
        "ack": A.latency_percentiles(runs.samples).toPandas(),
        "e2e": e2e,
        "java": A.kit_vs_java(runs.summary).toPandas(),
        "published": A.compare(spread, e2e),
    }


def bench_analyse(root: str | Path | None = None, synthetic: int = 100) -> int:
    import pandas as pd

    from eoslab import analysis as A
    from eoslab.bench.cluster import machine

    print(f"eoslab bench analyse on {machine()}")
    t0 = time.monotonic()
    spark = A.spark_session(kafka=False)
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
            A.generate_class(Path(tmp), learners=synthetic // 2 or 1, runs_each=2 if synthetic > 1 else 1)
            t0 = time.monotonic()
            analyse_all(spark, Path(tmp))
            secs = time.monotonic() - t0
        flag = "ok" if secs <= TARGET_S else "OVER TARGET"
        print(f"analysis over {synthetic} generated runs: {secs:.1f} s   target ≤ {TARGET_S:g} s  {flag}")
    spark.stop()
    return 0
