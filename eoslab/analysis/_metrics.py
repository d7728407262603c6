"""The figures of module 06 over runs and classes, as pure functions of the runs' DataFrames: latency
percentiles, read_committed latency against the commit interval, the spread of overheads across runs
(a run's own figures and their intervals: :mod:`eoslab.analysis._rounds`).

Every function takes and returns Spark DataFrames, so the same code serves one
learner's three runs and a class's three hundred; only the final, small results are
turned into pandas for plots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

QUANTILES = (0.5, 0.95, 0.99)
ACCURACY = 10_000
"""percentile_approx's accuracy: relative error 1/10,000 of the rank, far below run-to-run noise."""


def overhead_spread(overheads: DataFrame) -> DataFrame:
    """Across runs (and learners): how much the same mode costs on different machines, from each run's
    overhead (``median`` of :func:`eoslab.analysis.overhead`): each run counts once."""
    from pyspark.sql import functions as F

    return (
        overheads.groupBy("label", "mode", "commit_ms")
        .agg(
            F.countDistinct("learner").alias("learners"),
            F.count("*").alias("runs"),
            F.percentile_approx("median", 0.5, ACCURACY).alias("median"),
            F.min("median").alias("min"),
            F.max("median").alias("max"),
            F.percentile_approx("median", 0.25, ACCURACY).alias("q25"),
            F.percentile_approx("median", 0.75, ACCURACY).alias("q75"),
        )
        .orderBy("mode", "commit_ms")
    )


def latency_percentiles(
    samples: DataFrame, kind: str = "ack", quantiles: Sequence[float] = QUANTILES, by: Sequence[str] = ("label",)
) -> DataFrame:
    """p50/p95/p99 (columns ``p50``...) of one kind of latency sample, in ms."""
    from pyspark.sql import functions as F

    qs = list(quantiles)
    pct = F.percentile_approx("latency_ms", qs, ACCURACY).alias("q")
    out = samples.where(F.col("kind") == kind).groupBy(*by).agg(F.count("*").alias("samples"), pct)
    for i, q in enumerate(qs):
        out = out.withColumn(f"p{round(q * 100):g}", F.col("q")[i])
    return out.drop("q").orderBy(*by)


def e2e_by_commit_interval(samples: DataFrame, params: DataFrame) -> DataFrame:
    """End-to-end latency per isolation level against the commit interval (0 = not transactional)."""
    from pyspark.sql import functions as F

    p = params.select("run", "workload", F.coalesce(F.col("commit_ms"), F.lit(0.0)).alias("commit_ms"), "mode")
    e2e = (
        samples.where(F.col("kind").startswith("e2e_"))
        .join(p, ["run", "workload"])
        .withColumn("isolation", F.regexp_replace("kind", "^e2e_", ""))
    )
    return latency_percentiles(e2e.withColumn("kind", F.lit("e2e")), "e2e", by=("mode", "commit_ms", "isolation"))


def kit_vs_java(summary: DataFrame) -> DataFrame:
    """The harness against kafka-producer-perf-test, per run and mode (same settings, same run)."""
    from pyspark.sql import functions as F

    sat = summary.where(F.col("phase") == "saturation")
    ours = sat.where(F.col("client") == "eoslab").select("run", "label", F.col("records_per_s").alias("eoslab"))
    java = sat.where(F.col("client") == "java").select("run", "label", F.col("records_per_s").alias("java"))
    return ours.join(java, ["run", "label"]).withColumn("ratio", F.col("eoslab") / F.col("java"))
