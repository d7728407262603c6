"""The figures of module 06, as pure functions of the runs' DataFrames.

Every function takes and returns Spark DataFrames, so the same code serves one
learner's three runs and a class's three hundred; only the final, small results are
turned into pandas for plots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from eoslab.runs import BASELINE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

QUANTILES = (0.5, 0.95, 0.99)
ACCURACY = 10_000
"""percentile_approx's accuracy: relative error 1/10,000 of the rank, far below run-to-run noise."""


def throughput(summary: DataFrame, client: str = "eoslab") -> DataFrame:
    """Records/s and MB/s at saturation per mode: mean, min and max over runs."""
    from pyspark.sql import functions as F

    sat = summary.where((F.col("phase") == "saturation") & (F.col("client") == client))
    return (
        sat.groupBy("label", "mode", "commit_ms")
        .agg(
            F.count("*").alias("runs"),
            F.avg("records_per_s").alias("records_per_s"),
            F.min("records_per_s").alias("min_records_per_s"),
            F.max("records_per_s").alias("max_records_per_s"),
            F.avg("mb_per_s").alias("mb_per_s"),
        )
        .orderBy("mode", "commit_ms")
    )


def overhead(summary: DataFrame, baseline: str = BASELINE, client: str = "eoslab") -> DataFrame:
    """Per run and mode: 1 − throughput / throughput of ``baseline`` measured in the SAME run.

    Within-run ratios cancel most of what differs between laptops (CPU, load, disk);
    averaging throughputs first and dividing after would not.
    """
    from pyspark.sql import functions as F

    sat = summary.where((F.col("phase") == "saturation") & (F.col("client") == client))
    base = (
        sat.where(F.col("label") == baseline).groupBy("run").agg(F.avg("records_per_s").alias("baseline_records_per_s"))
    )
    return (
        sat.join(base, "run")
        .groupBy("learner", "run", "label", "mode", "commit_ms", "baseline_records_per_s")
        .agg(F.avg("records_per_s").alias("records_per_s"))
        .withColumn("overhead", 1 - F.col("records_per_s") / F.col("baseline_records_per_s"))
    )


def overhead_spread(overheads: DataFrame) -> DataFrame:
    """Across runs (and learners): how much the same mode costs on different machines."""
    from pyspark.sql import functions as F

    return (
        overheads.groupBy("label", "mode", "commit_ms")
        .agg(
            F.countDistinct("learner").alias("learners"),
            F.count("*").alias("runs"),
            F.percentile_approx("overhead", 0.5, ACCURACY).alias("median"),
            F.min("overhead").alias("min"),
            F.max("overhead").alias("max"),
            F.percentile_approx("overhead", 0.25, ACCURACY).alias("q25"),
            F.percentile_approx("overhead", 0.75, ACCURACY).alias("q75"),
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
