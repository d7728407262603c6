"""The cost of exactly-once across a class's machines, in Spark: per machine, the class, the outliers.

A learner's laptop is one machine; its runs (often one, sometimes a quick one and a long one) were all
measured on it, so its figure pools their rounds: every round's overhead is taken against the baseline
IN THE SAME ROUND, which cancels the drift of that machine, and the machine's interval is the same
percentile bootstrap over rounds as a run's (:func:`eoslab.analysis.bootstrap_median`), over more rounds.

The class's distribution is that of the machines' medians (each machine counts once, whatever number of
runs it handed in): quartiles, and Tukey's fences 1.5 × IQR beyond them. A machine is an outlier when
its WHOLE interval lies beyond a fence (a median just past it, with an interval that reaches back
inside, is not evidence of anything), or when its interval is so wide that the machine cannot be placed
(:data:`NOISY` times the class's typical half-width, and wider than :data:`NOISY_FLOOR`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eoslab.analysis._rounds import MODE, bootstrap_median, judged, overhead_by_round
from eoslab.runs import BASELINE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

MACHINE = ("learner", "machine")
FENCE = 1.5
"""Tukey's fences: q25 − 1.5 × IQR and q75 + 1.5 × IQR, the usual line past which a value is "far out"."""
NOISY = 3.0
"""A machine whose interval is this many times wider than the class's median interval cannot be placed."""
NOISY_FLOOR = 0.02
"""...and wider than ±2 points: narrower than that it resolves the ≈3 % published cost, however the rest of
the class did (a class of quiet machines has a typical half-width near 0, which must not make all noisy)."""
ACCURACY = 10_000


def machine_overhead(
    summary: DataFrame, machines: DataFrame | None = None, baseline: str = BASELINE, *, seed: int = 0
) -> DataFrame:
    """Per learner's machine and mode: ``runs``, ``rounds``, the overhead's ``median`` over the machine's
    rounds with its interval (``lo``, ``hi``), ``resolved``, ``half_width``. ``machines`` (``learner``,
    ``machine``) names each learner's machine; without it the column is empty."""
    from pyspark.sql import functions as F

    rounds = overhead_by_round(summary, baseline)
    if machines is None:
        rounds = rounds.withColumn("machine", F.lit(""))
    else:
        rounds = rounds.join(machines.select(*MACHINE), "learner")
    runs = rounds.groupBy(*MACHINE, "label").agg(F.countDistinct("run").alias("runs"))
    ov = bootstrap_median(rounds, "overhead", [*MACHINE, *MODE], seed=seed)
    return judged(ov.join(runs, [*MACHINE, "label"])).orderBy("learner", "mode", "commit_ms")


def class_distribution(per_machine: DataFrame, baseline: str = BASELINE) -> DataFrame:
    """Per mode, across machines (each counts once): ``machines``, ``resolved`` (how many resolve it),
    ``q25``/``median``/``q75`` of their medians, ``min``/``max``, Tukey's ``low_fence``/``high_fence``,
    and ``typical_half_width`` (the median machine's interval)."""
    from pyspark.sql import functions as F

    q = F.percentile_approx("median", [0.25, 0.5, 0.75], ACCURACY)
    out = (
        per_machine.where(F.col("label") != baseline)
        .groupBy(*MODE)
        .agg(
            F.count("*").alias("machines"),
            F.sum(F.col("resolved").cast("int")).alias("resolved"),
            q.alias("_q"),
            F.min("median").alias("min"),
            F.max("median").alias("max"),
            F.percentile_approx("half_width", 0.5, ACCURACY).alias("typical_half_width"),
        )
    )
    iqr = F.col("q75") - F.col("q25")
    return (
        out.select(
            *MODE,
            "machines",
            F.coalesce("resolved", F.lit(0)).alias("resolved"),
            F.col("_q")[0].alias("q25"),
            F.col("_q")[1].alias("median"),
            F.col("_q")[2].alias("q75"),
            "min",
            "max",
            "typical_half_width",
        )
        .withColumn("low_fence", F.col("q25") - FENCE * iqr)
        .withColumn("high_fence", F.col("q75") + FENCE * iqr)
        .orderBy("mode", "commit_ms")
    )


def class_outliers(per_machine: DataFrame, distribution: DataFrame) -> DataFrame:
    """The machines that stand out, per mode, each with its ``reason`` in words (see the module docstring):
    ``learner``, ``machine``, ``label``, ``median``, ``lo``, ``hi``, ``reason``."""
    from pyspark.sql import functions as F

    d = distribution.select("label", "low_fence", "high_fence", "typical_half_width")
    j = per_machine.join(d, "label")
    pct = F.lit(100.0)
    above = F.when(
        F.col("lo") > F.col("high_fence"),
        F.format_string(
            "its interval %.1f%% to %.1f%% lies above the class's upper fence %.1f%% (q75 + 1.5 × IQR)",
            F.col("lo") * pct,
            F.col("hi") * pct,
            F.col("high_fence") * pct,
        ),
    )
    below = F.when(
        F.col("hi") < F.col("low_fence"),
        F.format_string(
            "its interval %.1f%% to %.1f%% lies below the class's lower fence %.1f%% (q25 − 1.5 × IQR)",
            F.col("lo") * pct,
            F.col("hi") * pct,
            F.col("low_fence") * pct,
        ),
    )
    wide = (F.col("half_width") > NOISY * F.col("typical_half_width")) & (F.col("half_width") > NOISY_FLOOR)
    noisy = F.when(
        wide,
        F.format_string(
            "noisy: its interval is ±%.1f points, the class's typical one ±%.1f: too wide to place this machine",
            F.col("half_width") * pct,
            F.col("typical_half_width") * pct,
        ),
    )
    reason = F.concat_ws("; ", above, below, noisy)  # concat_ws skips the nulls: only the reasons that hold
    return (
        j.withColumn("reason", reason)
        .where(F.col("reason") != "")
        .select(*MACHINE, "label", "median", "lo", "hi", "reason")
        .orderBy("label", "learner")
    )
