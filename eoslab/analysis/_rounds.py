"""Intervals from rounds, in Spark: medians over rounds and a bootstrap over rounds.

A run measures every mode once per round (``eoslab.bench.producers``). A mode's figure is the
median over its rounds; its overhead is, round by round, 1 − its throughput ÷ the baseline's
throughput IN THE SAME ROUND (seconds apart, so the machine's drift cancels), then the median
over rounds. The interval is a percentile bootstrap over rounds: draw the run's rounds with
replacement, take the median, again ``reps`` times; the 2.5th and 97.5th percentiles of those
medians bound the 95 % interval. Everything here is Spark: a group's rounds ``collect_list``-ed,
``reps`` resamples drawn with ``element_at`` at ``xxhash64(group, resample, slot, seed)`` mod the rounds, their medians
``F.median``, the bounds ``percentile_approx``.

An overhead whose interval holds 0 is *not resolved by this run*. The smallest effect a run can
resolve is the half-width of its intervals: a smaller true overhead would give an interval that
holds 0 about as often as not. With few rounds the percentile bootstrap is rough (it tends to be
too narrow below ~10 rounds): a long run (``--rounds 15``) is what makes the interval trustworthy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from eoslab.runs import BASELINE

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

LEVEL = 0.95
REPS = 1000
"""Bootstrap resamples: the 2.5th/97.5th percentiles of 1,000 medians move by less than a round's noise."""
MIN_ROUNDS = 3
"""Below this many rounds a run gets a median but no interval (two values say nothing about a spread)."""
ACCURACY = 10_000
RUN = ("learner", "run")
MODE = ("label", "mode", "commit_ms")
KIND = "kind"
"""The column that keeps :func:`bootstrap_many`'s frames apart."""
THROUGHPUT = "throughput"
"""The kind of :func:`intervals`' throughput rows (its overhead rows' kind is their baseline's label)."""


def round_rows(summary: DataFrame, client: str = "eoslab") -> DataFrame:
    """The saturation rows measured in rounds (the harness; the Java peer and the fixed load are not)."""
    from pyspark.sql import functions as F

    return summary.where((F.col("phase") == "saturation") & (F.col("client") == client) & (F.col("round") >= 0))


def overhead_by_round(summary: DataFrame, baseline: str = BASELINE) -> DataFrame:
    """Per run, round and mode: 1 − records/s ÷ the baseline's records/s in the same run and round."""
    from pyspark.sql import functions as F

    rows = round_rows(summary)
    base = rows.where(F.col("label") == baseline).select(
        *RUN, "round", F.col("records_per_s").alias("baseline_records_per_s")
    )
    return (
        rows.join(base, [*RUN, "round"])
        .select(*RUN, *MODE, "round", "records_per_s", "baseline_records_per_s")
        .withColumn("overhead", 1 - F.col("records_per_s") / F.col("baseline_records_per_s"))
    )


def bootstrap_median(
    df: DataFrame,
    value: str,
    by: Sequence[str],
    *,
    reps: int = REPS,
    level: float = LEVEL,
    seed: int = 0,
) -> DataFrame:
    """Per group of ``by``: ``rounds``, the ``median`` of ``value`` and its percentile-bootstrap interval
    (``lo``, ``hi``; null below :data:`MIN_ROUNDS` rounds), resampling the group's rows (its rounds)."""
    return _bootstrap(df, value, list(by), [], reps=reps, level=level, seed=seed)


def bootstrap_many(
    frames: Mapping[str, DataFrame],
    value: str,
    by: Sequence[str],
    *,
    reps: int = REPS,
    level: float = LEVEL,
    seed: int = 0,
) -> DataFrame:
    """:func:`bootstrap_median` of several frames in ONE Spark job instead of one job each: their ``by`` and
    ``value`` columns stacked under a :data:`KIND` column (the frame's key in ``frames``), the bootstrap grouped by
    kind and ``by``. A kind's rows are, to the bit, ``bootstrap_median(frames[kind], value, by)``'s: a draw hashes
    its group's ``by`` alone, not its kind, so the same rounds are drawn whichever frames are stacked together."""
    from functools import reduce

    from pyspark.sql import functions as F

    by = list(by)
    parts = [f.select(F.lit(kind).alias(KIND), *by, value) for kind, f in frames.items()]
    return _bootstrap(
        reduce(lambda a, b: a.unionByName(b), parts), value, by, [KIND], reps=reps, level=level, seed=seed
    )


def _bootstrap(
    df: DataFrame, value: str, by: list[str], apart: list[str], *, reps: int, level: float, seed: int
) -> DataFrame:
    """:func:`bootstrap_median` per group of ``apart`` + ``by``, the draws hashing ``by`` only (``apart`` keeps
    stacked frames apart without changing their draws)."""
    from pyspark.sql import functions as F

    groups = [*apart, *by]
    g = df.groupBy(*groups).agg(
        F.count("*").alias("rounds"), F.median(value).alias("median"), F.collect_list(value).alias("_vals")
    )
    draws = (
        g.crossJoin(df.sparkSession.range(reps).withColumnRenamed("id", "_rep"))
        .withColumn("_slot", F.explode(F.sequence(F.lit(1), F.col("rounds"))))
        # The draw: a hash of (group, resample, slot, seed) rather than rand(), so the same runs give the same
        # interval whatever order Spark's shuffles deliver the rows in.
        .withColumn("_k", F.pmod(F.xxhash64(F.to_json(F.struct(*by)), "_rep", "_slot", F.lit(seed)), "rounds") + 1)
        .withColumn("_x", F.element_at("_vals", F.col("_k").cast("int")))
    )
    keys = [*groups, "rounds", "median"]
    medians = draws.groupBy(*keys, "_rep").agg(F.median("_x").alias("_m"))
    alpha = (1 - level) / 2
    bounds = medians.groupBy(*keys).agg(F.percentile_approx("_m", [alpha, 1 - alpha], ACCURACY).alias("_b"))
    enough = F.col("rounds") >= MIN_ROUNDS
    return bounds.select(*keys, F.when(enough, F.col("_b")[0]).alias("lo"), F.when(enough, F.col("_b")[1]).alias("hi"))


def throughput(summary: DataFrame, *, seed: int = 0) -> DataFrame:
    """Per run and mode: the harness's records/s, median over rounds, with its interval."""
    from pyspark.sql import functions as F

    rows = round_rows(summary)
    out = bootstrap_median(rows, "records_per_s", [*RUN, *MODE], seed=seed)
    mb = rows.groupBy(*RUN, "label").agg(F.median("mb_per_s").alias("mb_per_s"))
    return out.join(mb, [*RUN, "label"]).orderBy(*RUN, "mode", "commit_ms")


def overhead(summary: DataFrame, baseline: str = BASELINE, *, seed: int = 0) -> DataFrame:
    """Per run and mode: the overhead against ``baseline`` (median over rounds of the within-round
    overhead) with its interval, ``resolved`` (the interval excludes 0) and ``half_width``."""
    ov = bootstrap_median(overhead_by_round(summary, baseline), "overhead", [*RUN, *MODE], seed=seed)
    return judged(ov).orderBy(*RUN, "mode", "commit_ms")


def intervals(summary: DataFrame, baselines: Sequence[str] = (BASELINE,), *, seed: int = 0) -> DataFrame:
    """:func:`throughput` (kind :data:`THROUGHPUT`) and :func:`overhead` against each of ``baselines`` (kind: the
    baseline's label) in one Spark job (:func:`bootstrap_many`), each kind's rows and columns those functions give
    for the same ``seed``; every row has all their columns, ordered by kind, then as they order theirs."""
    from pyspark.sql import functions as F

    rows = round_rows(summary)
    frames = {THROUGHPUT: rows.withColumnRenamed("records_per_s", "_value")}
    for b in baselines:
        frames[b] = overhead_by_round(summary, b).withColumnRenamed("overhead", "_value")
    out = judged(bootstrap_many(frames, "_value", [*RUN, *MODE], seed=seed))
    mb = rows.groupBy(*RUN, "label").agg(F.median("mb_per_s").alias("mb_per_s"))
    return out.join(mb, [*RUN, "label"]).orderBy(KIND, *RUN, "mode", "commit_ms")


def judged(ov: DataFrame) -> DataFrame:
    """``resolved`` (the interval excludes 0; null without an interval) and ``half_width``, beside an
    overhead's ``lo``/``hi``: one reading of an interval for a run's figures and a machine's alike."""
    from pyspark.sql import functions as F

    resolved = (F.col("lo") > 0) | (F.col("hi") < 0)
    return ov.withColumn("resolved", F.when(F.col("lo").isNotNull(), resolved)).withColumn(
        "half_width", (F.col("hi") - F.col("lo")) / 2
    )


def resolvable(overheads: DataFrame, baseline: str = BASELINE) -> DataFrame:
    """Per run: the smallest overhead it can resolve (median half-width of its modes' intervals)."""
    from pyspark.sql import functions as F

    return (
        overheads.where((F.col("label") != baseline) & F.col("half_width").isNotNull())
        .groupBy(*RUN)
        .agg(F.median("half_width").alias("resolvable"), F.min("rounds").alias("rounds"))
    )


def transactions(summary: DataFrame) -> DataFrame:
    """Per run and transactional mode: commits per slice and how long a transaction really lasted
    (at saturation a commit flushes the client's buffer, so it takes longer than its interval)."""
    from pyspark.sql import functions as F

    rows = round_rows(summary).where(F.col("commits") > 0)
    return rows.groupBy(*RUN, *MODE).agg(
        F.median("commits").alias("commits_per_slice"),
        F.median(F.col("seconds") * 1000 / F.col("commits")).alias("transaction_ms"),
        F.median(F.col("records") / F.col("commits")).alias("records_per_transaction"),
    )


def kit_vs_java(summary: DataFrame) -> DataFrame:
    """Per run and mode: the harness (median over rounds) against Kafka's producer-perf-test (its rate after
    its warm-up report), with the same settings and bytes in the same run; ``ratio`` = eoslab / java."""
    from pyspark.sql import functions as F

    ours = round_rows(summary).groupBy(*RUN, "label").agg(F.median("records_per_s").alias("eoslab"))
    java = summary.where((F.col("phase") == "saturation") & (F.col("client") == "java"))
    cols: list[Any] = [*RUN, "label", F.col("records_per_s").alias("java")]
    for extra in (
        "java_total_records_per_s",
        "java_windows",
        "java_still_warming",
        "java_payload",
        "cpu_us_per_record",
    ):
        if extra in java.columns:
            cols.append(F.col(extra).alias("java_cpu_us_per_record" if extra == "cpu_us_per_record" else extra))
    harness_cpu = (
        round_rows(summary).groupBy(*RUN, "label").agg(F.median("cpu_us_per_record").alias("eoslab_cpu_us_per_record"))
        if "cpu_us_per_record" in summary.columns
        else None
    )
    out = ours.join(java.select(*cols), [*RUN, "label"]).withColumn("ratio", F.col("eoslab") / F.col("java"))
    return out.join(harness_cpu, [*RUN, "label"], "left") if harness_cpu is not None else out
