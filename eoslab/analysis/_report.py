"""One run's figures with their intervals and the report ``eoslab bench producers`` prints: computed in Spark
(:mod:`eoslab.analysis._rounds`), turned into pandas only once they are small; the sentences they support come
from :mod:`eoslab.analysis._takeaways`.

Two pairwise overheads, each round by round: every mode against ``acks_all`` (the course's durability without
EOS), and every transactional mode against ``idempotent`` (the same in-flight rule, so what the transaction
itself adds).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from eoslab.analysis._cpeer import CPEER_TABLE, Bounds, cpeer_lines, cpeer_table, peer_flag
from eoslab.analysis._cpu import cpu_lines
from eoslab.analysis._load import Runs, load_runs
from eoslab.analysis._metrics import latency_percentiles
from eoslab.analysis._rounds import KIND, MODE, RUN, THROUGHPUT, intervals, kit_vs_java, transactions
from eoslab.analysis._takeaways import IDEMPOTENT, interval, overhead_verdict, pct, rounds_for, takeaways
from eoslab.errors import DataError
from eoslab.runs import BASELINE, IDEMPOTENT_NOTE, JAVA_WARMUP_S, TXN_NOTE, cpu_table, warmup_sentence

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["RunFigures", "overhead_verdict", "report", "report_text", "rounds_for", "run_figures", "takeaways"]
OVERHEAD_COLUMNS = ("label", "mode", "commit_ms", "rounds", "overhead", "overhead_lo", "overhead_hi", "resolved")


@dataclass
class RunFigures:
    """One run's tables (pandas): per mode, throughput and overhead with intervals, the Java peer,
    transactions as they really were, ack latency at a fixed load; and the run's resolvable effect.
    ``vs_idempotent``: each transactional mode's overhead against idempotent (:data:`OVERHEAD_COLUMNS`, the
    names of ``modes``); ``round_s``: a round's measured slices, median over rounds (NaN: no rounds)."""

    run: str
    env: pd.Series
    modes: pd.DataFrame
    java: pd.DataFrame
    latency: pd.DataFrame
    resolvable: float
    rounds: int
    cpu: pd.DataFrame = field(default_factory=lambda: cpu_table(pd.DataFrame()))  # eoslab.runs.cpu_table
    cpeer: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(CPEER_TABLE)))
    vs_idempotent: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(OVERHEAD_COLUMNS)))
    round_s: float = math.nan


def _pandas(df: Any) -> pd.DataFrame:
    """A small Spark result as pandas (typed: PySpark's stubs do not say toPandas returns a DataFrame)."""
    out = df.toPandas()
    assert isinstance(out, pd.DataFrame)
    return out


def _one_run(runs: Runs, run: str | None) -> tuple[str, Runs]:
    from pyspark.sql import functions as F

    names = [r["run"] for r in runs.env.orderBy("started_at", "run").select("run").collect()]
    chosen = run if run is not None else names[-1]
    if chosen not in names:
        raise DataError(f"There is no run {chosen!r}: choose one of {', '.join(names)}.")

    def only(df: Any) -> Any:
        return df.where(F.col("run") == chosen)

    return chosen, Runs(only(runs.params), only(runs.summary), only(runs.samples), only(runs.env))


def _renamed(ov: pd.DataFrame) -> pd.DataFrame:
    """An :func:`overhead` table under ``modes``' names (``overhead``, ``overhead_lo``, ``overhead_hi``)."""
    return ov.rename(columns={"median": "overhead", "lo": "overhead_lo", "hi": "overhead_hi"})


THROUGHPUT_COLUMNS = (*RUN, *MODE, "rounds", "median", "lo", "hi", "mb_per_s")
""":func:`eoslab.analysis.throughput`'s columns."""
INTERVAL_COLUMNS = (*RUN, *MODE, "rounds", "median", "lo", "hi", "resolved", "half_width")
""":func:`eoslab.analysis.overhead`'s columns."""


def _kind(iv: pd.DataFrame, kind: str, columns: tuple[str, ...]) -> pd.DataFrame:
    """One kind of :func:`intervals`' rows as the function of that kind gives them (a boolean column of a kind
    without nulls is bool again, as it would be alone)."""
    return iv.loc[iv[KIND] == kind, list(columns)].reset_index(drop=True).infer_objects()


def _vs_idempotent(ov: pd.DataFrame) -> pd.DataFrame:
    """Each transactional mode against idempotent, round by round (none in a run without idempotent)."""
    ov = _renamed(ov)
    return ov[ov["mode"] == "transactional"][list(OVERHEAD_COLUMNS) + ["half_width"]].reset_index(drop=True)


def _resolvable(ov: pd.DataFrame) -> float:
    """:func:`eoslab.analysis.resolvable` of one run's overheads, on pandas: the median half-width of its modes'
    intervals (NaN: no intervals)."""
    hw = ov.loc[(ov["label"] != BASELINE) & ov["half_width"].notna(), "half_width"]
    return float(hw.median()) if len(hw) else math.nan


def _round_s(sat: pd.DataFrame) -> float:
    """A round's measured slices (the harness's), median over the run's rounds."""
    rows = sat[(sat["client"] == "eoslab") & (sat["round"] >= 0)]
    return float(rows.groupby("round")["seconds"].sum().median()) if len(rows) else math.nan


def run_figures(runs: Runs, run: str | None = None, *, seed: int = 0) -> RunFigures:
    """The figures of one run (the latest by default)."""
    name, one = _one_run(runs, run)
    summary = one.summary.cache()  # a few dozen rows, read from Parquet once instead of once per figure
    # throughput, the overhead vs acks_all and vs idempotent: their three bootstraps in one Spark job
    iv = _pandas(intervals(summary, (BASELINE, IDEMPOTENT), seed=seed))
    tp, ov_raw = _kind(iv, THROUGHPUT, THROUGHPUT_COLUMNS), _kind(iv, BASELINE, INTERVAL_COLUMNS)
    ov = _renamed(ov_raw)
    tx = _pandas(transactions(summary))
    modes = tp.rename(columns={"median": "records_per_s", "lo": "records_per_s_lo", "hi": "records_per_s_hi"})
    modes = modes.merge(
        ov[["label", "overhead", "overhead_lo", "overhead_hi", "resolved", "half_width"]], on="label", how="left"
    ).merge(tx[["label", "commits_per_slice", "transaction_ms"]], on="label", how="left")
    java = _pandas(kit_vs_java(summary))
    lat = _pandas(latency_percentiles(one.samples, "ack"))
    sat = _pandas(summary.where("phase = 'saturation'"))  # every client's saturation rows: a few dozen
    env = _pandas(one.env).iloc[0]
    summary.unpersist()
    return RunFigures(
        name,
        env,
        modes,
        java,
        lat,
        _resolvable(ov_raw),
        int(modes["rounds"].min()) if len(modes) else 0,
        cpu_table(sat),
        cpeer_table(sat),
        _vs_idempotent(_kind(iv, IDEMPOTENT, INTERVAL_COLUMNS)),
        _round_s(sat),
    )


def _env_line(env: pd.Series) -> str:
    return (
        f"run {env['run_id']}: {env['cores']} cores ({env['cpu']}), Kafka {env['kafka_version']}, librdkafka "
        f"{env['librdkafka_version']}, {env['backend']} backend, load {env['load1_at_start']} at start, "
        f"{env.get('rounds', '?')} rounds, {env.get('wall_s', '?')} s"
        + (f", pinned: {env['pinned']}" if isinstance(env.get("pinned"), str) and env["pinned"] else "")
    )


def _mode_lines(f: RunFigures) -> list[str]:
    """The table of modes: throughput and its interval, the overhead, its interval and its verdict."""
    lines = [
        "saturation, median over rounds [95 % bootstrap interval over rounds]:",
        f"{'mode':<12}{'records/s':>10} {'interval':<17}{'overhead vs acks_all':>21} {'interval':<18} verdict",
    ]
    for _, r in f.modes.iterrows():
        tp_int = (
            "no interval"
            if pd.isna(r["records_per_s_lo"])
            else f"[{r['records_per_s_lo']:.0f}, {r['records_per_s_hi']:.0f}]"
        )
        ov = "" if r["label"] == BASELINE else pct(r["overhead"])
        ov_int = "" if r["label"] == BASELINE else interval(r["overhead_lo"], r["overhead_hi"])
        lines.append(
            f"{r['label']:<12}{r['records_per_s']:>10.0f} {tp_int:<17}{ov:>21} {ov_int:<18} {overhead_verdict(r)}"
        )
    if not math.isnan(f.resolvable):
        lines.append(f"smallest overhead this run resolves: about ±{f.resolvable:.1%} (half-width of its intervals)")
    tx = f.modes.dropna(subset=["transaction_ms"]) if "transaction_ms" in f.modes else f.modes.iloc[0:0]
    for _, r in tx.iterrows():
        lines.append(
            f"{r['label']}: {r['commits_per_slice']:.0f} commits per slice, "
            f"a transaction lasted {r['transaction_ms']:.0f} ms"
        )
    return lines


def _vs_idempotent_lines(f: RunFigures) -> list[str]:
    """The second pairwise table: each transactional mode against idempotent, in the format of the first."""
    if not len(f.vs_idempotent):
        return []
    head = "overhead vs idempotent"
    lines = [
        "transactions against idempotent (the same in-flight rule, so what the transaction itself adds), round by "
        "round, median over rounds [95 % bootstrap interval over rounds]:",
        f"{'mode':<12}{head:>23} {'interval':<18} verdict",
    ]
    for _, r in f.vs_idempotent.iterrows():
        lines.append(
            f"{r['label']:<12}{pct(r['overhead']):>23} {interval(r['overhead_lo'], r['overhead_hi']):<18} "
            f"{overhead_verdict(r, IDEMPOTENT)}"
        )
    return lines


NO_WINDOW = f"no measured window: the tool finished within its first {JAVA_WARMUP_S:g} s report (its warm-up)"


def _java_line(j: pd.Series, bounds: Bounds) -> str:
    """One mode against Kafka's producer-perf-test: the rates, their ratio, and what a low one means; a tool
    that had no window after its warm-up has no rate, and that is all its line says of it."""
    warm = "  (still warming up: measure longer)" if bool(j.get("java_still_warming", False)) else ""
    total = j.get("java_total_records_per_s", math.nan)
    head = f"  {j['label']:<12} eoslab {j['eoslab']:>8.0f}  java "
    brackets = "" if pd.isna(total) else f"({total:.0f})"
    if pd.isna(j["java"]):
        return f"{head}{'—':>8} {brackets}  {NO_WINDOW}"
    flag = peer_flag(j["label"], float(j["ratio"]), float(j["java"]), bounds)
    return f"{head}{j['java']:>8.0f} {brackets}  ratio {j['ratio']:.2f}{flag}{warm}"


def _bounds(f: RunFigures) -> Bounds:
    """Each mode's records/s interval over rounds, for judging a peer's ratio."""
    return {
        str(r["label"]): (float(r["records_per_s_lo"]), float(r["records_per_s_hi"])) for _, r in f.modes.iterrows()
    }


def _java_lines(f: RunFigures) -> list[str]:
    if not len(f.java):
        return []
    return [
        f"Kafka's producer-perf-test, same settings and bytes, its rate after its first {JAVA_WARMUP_S:g} s report "
        "(the tool's own total, warm-up included, in brackets):",
        *(_java_line(j, _bounds(f)) for _, j in f.java.iterrows()),
    ]


def _latency_lines(f: RunFigures) -> list[str]:
    if not len(f.latency):
        return []
    return [
        "ack latency at a fixed load (ms): "
        + ", ".join(f"{r['label']} {r['p50']:.1f}/{r['p99']:.1f}" for _, r in f.latency.iterrows())
        + "  (p50/p99)"
    ]


def report_text(f: RunFigures) -> str:
    """The one-screen report of a run: per mode the median over rounds and its 95 % interval, the
    overhead against acks_all and whether this run resolves it, each transactional mode against idempotent
    likewise, the Java peer, latency, takeaways."""
    warm = warmup_sentence(f.env)
    lines = [_env_line(f.env), *([warm] if warm else []), *_mode_lines(f), *_vs_idempotent_lines(f), *_java_lines(f)]
    lines += cpeer_lines(f.cpeer, str(f.env.get("librdkafka_version", "?")), _bounds(f), java_measured=len(f.java) > 0)
    lines += cpu_lines(f.cpu, str(f.env.get("backend", "local")))
    lines += [*_latency_lines(f), "takeaways:"]
    lines += [f"- {t}" for t in takeaways(f)]
    lines.append(f"note: {TXN_NOTE}.")
    lines.append(f"note: {IDEMPOTENT_NOTE}.")
    return "\n".join(lines)


def report(spark: SparkSession, folder: str | Path) -> str:
    """``eoslab bench producers``' printout for the run in ``folder``."""
    return report_text(run_figures(load_runs(spark, folder)))
