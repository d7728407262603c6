"""One run's figures with their intervals, the sentences they support, and the report
``eoslab bench producers`` prints: computed in Spark (:mod:`eoslab.analysis._rounds`), turned into
pandas only once they are small.

The takeaways are decided by the data: an overhead is called a cost only when its interval
excludes 0, a difference between commit intervals only when their intervals do not overlap, and
a run whose intervals are wider than the effect it is asked about says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from eoslab.analysis._cpeer import CPEER_TABLE, cpeer_lines, cpeer_table
from eoslab.analysis._cpu import cpu_lines
from eoslab.analysis._load import Runs, load_runs
from eoslab.analysis._metrics import latency_percentiles
from eoslab.analysis._published import PUBLISHED
from eoslab.analysis._rounds import kit_vs_java, overhead, resolvable, throughput, transactions
from eoslab.bench.producers import IDEMPOTENT_NOTE, JAVA_WARMUP_S, TXN_NOTE
from eoslab.bench.targets import HARNESS_VS_JAVA_RATIO
from eoslab.errors import DataError
from eoslab.runs import BASELINE, CPU_COLUMNS, cpu_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class RunFigures:
    """One run's tables (pandas): per mode, throughput and overhead with intervals, the Java peer,
    transactions as they really were, ack latency at a fixed load; and the run's resolvable effect."""

    run: str
    env: pd.Series
    modes: pd.DataFrame
    java: pd.DataFrame
    latency: pd.DataFrame
    resolvable: float
    rounds: int
    cpu: pd.DataFrame = field(default_factory=lambda: cpu_table(pd.DataFrame()))  # eoslab.runs.cpu_table
    cpeer: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(CPEER_TABLE)))


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


def _cpu_rows(summary: Any) -> Any:
    """The saturation rows' columns :func:`eoslab.runs.cpu_table` reads (a run from before them has none)."""
    cols = ["label", "client", "phase", "records", *(c for c in CPU_COLUMNS if c in summary.columns)]
    return summary.where("phase = 'saturation'").select(*cols)


def run_figures(runs: Runs, run: str | None = None, *, seed: int = 0) -> RunFigures:
    """The figures of one run (the latest by default)."""
    name, one = _one_run(runs, run)
    summary = one.summary.cache()  # a few dozen rows, read from Parquet once instead of once per figure
    tp = _pandas(throughput(summary, seed=seed))
    ov_df = overhead(summary, seed=seed).cache()
    ov = _pandas(ov_df)
    tx = _pandas(transactions(summary))
    modes = tp.rename(columns={"median": "records_per_s", "lo": "records_per_s_lo", "hi": "records_per_s_hi"})
    modes = modes.merge(
        ov[["label", "median", "lo", "hi", "resolved", "half_width"]].rename(
            columns={"median": "overhead", "lo": "overhead_lo", "hi": "overhead_hi"}
        ),
        on="label",
        how="left",
    ).merge(tx[["label", "commits_per_slice", "transaction_ms"]], on="label", how="left")
    res = _pandas(resolvable(ov_df))
    java = _pandas(kit_vs_java(summary))
    lat = _pandas(latency_percentiles(one.samples, "ack"))
    cpu = cpu_table(_pandas(_cpu_rows(summary)))
    cpeer = cpeer_table(_pandas(summary.where("phase = 'saturation'")))
    env = _pandas(one.env).iloc[0]
    ov_df.unpersist()
    summary.unpersist()
    return RunFigures(
        name,
        env,
        modes,
        java,
        lat,
        float(res["resolvable"].iloc[0]) if len(res) else math.nan,
        int(modes["rounds"].min()) if len(modes) else 0,
        cpu,
        cpeer,
    )


def _pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.1%}"


def _interval(lo: Any, hi: Any) -> str:
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return "no interval"
    return f"[{lo:+.1%}, {hi:+.1%}]"


def overhead_verdict(row: pd.Series) -> str:
    """A mode's overhead in words, decided by its interval (a row of :func:`overhead` or of ``RunFigures.modes``)."""
    if row["label"] == BASELINE:
        return "baseline"
    if row.get("resolved") is None or pd.isna(row.get("resolved")):
        return f"too few rounds for an interval ({int(row['rounds'])})"
    if not bool(row["resolved"]):
        return "not resolved by this run"
    return "slower than acks_all" if row.get("overhead", row.get("median")) > 0 else "faster than acks_all"


def rounds_for(f: RunFigures, effect: float) -> int:
    """Rounds a run like ``f`` would need to resolve ``effect``: a bootstrap interval's half-width shrinks
    as 1/√rounds (at least 3 rounds: below that there is no interval)."""
    return max(3, math.ceil(f.rounds * (f.resolvable / effect) ** 2))


def _resolution(f: RunFigures) -> list[str]:
    """What size of effect this run can tell from zero, against the published 3 %."""
    if math.isnan(f.resolvable):
        return []
    return [
        f"This run ({f.rounds} rounds) resolves overheads larger than about ±{f.resolvable:.1%}: "
        + (
            "enough for the published ≈ 3 % (Confluent, 1 KB records, 100 ms commits)."
            if f.resolvable < 0.03
            else "a 3 % effect (the published figure) is below what it can tell from zero; intervals narrow "
            f"as 1/√rounds, so about {rounds_for(f, 0.03)} rounds would resolve it "
            f"(`eoslab bench producers --rounds {rounds_for(f, 0.03)} --seconds 10`)."
        )
    ]


def _idempotence(m: pd.DataFrame) -> list[str]:
    """Idempotence's overhead, in words its interval supports."""
    if "idempotent" not in m.index:
        return []
    r = m.loc["idempotent"]
    verdict = overhead_verdict(r)
    measured = f"Idempotence vs acks=all: {_pct(r['overhead'])} {_interval(r['overhead_lo'], r['overhead_hi'])}"
    if verdict == "not resolved by this run":
        return [f"{measured}, not resolved by this run: the data cannot tell it from no cost."]
    if "slower" in verdict:
        return [
            f"{measured}: a cost this run resolves; the bytes are the same (every v2 batch carries producer id, "
            "epoch and sequence), so look at the client: " + IDEMPOTENT_NOTE + "."
        ]
    if "faster" in verdict:
        return [
            f"{measured}: faster than the baseline in this run, an effect of the machine rather than of idempotence."
        ]
    return [f"Idempotence vs acks=all: {verdict}."]


def _commit_intervals(m: pd.DataFrame) -> list[str]:
    """Whether a longer commit interval costs less: only when the shortest's and the longest's intervals
    do not overlap."""
    txn = m[m["mode"] == "transactional"].sort_values("commit_ms") if "mode" in m else m.iloc[0:0]
    if len(txn) < 2:
        return []
    short, long_ = txn.iloc[0], txn.iloc[-1]
    apart = (
        short["overhead_lo"] is not None
        and not pd.isna(short["overhead_lo"])
        and not pd.isna(long_["overhead_hi"])
        and short["overhead_lo"] > long_["overhead_hi"]
    )
    if apart:
        return [
            f"Transactions: committing every {int(short['commit_ms'])} ms costs {_pct(short['overhead'])}, every "
            f"{int(long_['commit_ms'])} ms {_pct(long_['overhead'])}, and the intervals do not overlap: the longer "
            "the commit interval, the smaller the cost (a commit drains the client's buffer and waits for EndTxn)."
        ]
    a, b = txn.index[0], txn.index[-1]
    first = f"{a} {_pct(short['overhead'])} {_interval(short['overhead_lo'], short['overhead_hi'])}"
    last = f"{b} {_pct(long_['overhead'])} {_interval(long_['overhead_lo'], long_['overhead_hi'])}"
    return [
        f"Transactions: {first} and {last}: their intervals overlap, so this run cannot say that a longer "
        "commit interval costs less."
    ]


def _against_published(m: pd.DataFrame) -> list[str]:
    """The 100 ms commits held against the published ≈ 3 %, and how long such a transaction really lasted."""
    if "txn_100ms" not in m.index:
        return []
    r = m.loc["txn_100ms"]
    lo, hi = r["overhead_lo"], r["overhead_hi"]
    if pd.isna(lo):
        out = ["The published ≈ 3 % for 100 ms commits: this run has no interval to hold it against."]
    elif lo <= 0.03 <= hi:
        out = [
            f"The published ≈ 3 % for 100 ms commits lies inside this run's interval {_interval(lo, hi)}: "
            "consistent" + (", though the interval also holds 0." if lo <= 0 else ".")
        ]
    else:
        out = [
            f"The published ≈ 3 % for 100 ms commits lies outside this run's interval {_interval(lo, hi)} "
            f"(measured {_pct(r['overhead'])}); " + next(p.why_differ for p in PUBLISHED if p.mode == "txn_100ms") + "."
        ]
    if not pd.isna(r.get("transaction_ms", math.nan)):
        out.append(
            f"A '100 ms' transaction really lasted {r['transaction_ms']:.0f} ms at saturation: the commit "
            "flushes what the client had buffered (buffer.memory / queue.buffering.max.kbytes) before EndTxn."
        )
    return out


def takeaways(f: RunFigures) -> list[str]:
    """The sentences this run supports, each decided by its intervals (never fixed text)."""
    m = f.modes.set_index("label", drop=False)
    return [*_resolution(f), *_idempotence(m), *_commit_intervals(m), *_against_published(m)]


def _env_line(env: pd.Series) -> str:
    return (
        f"run {env['run_id']}: {env['cores']} cores ({env['cpu']}), Kafka {env['kafka_version']}, librdkafka "
        f"{env['librdkafka_version']}, {env['backend']} backend, load {env['load1_at_start']} at start, "
        f"{env.get('rounds', '?')} rounds, {env.get('wall_s', '?')} s"
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
        ov = "" if r["label"] == BASELINE else _pct(r["overhead"])
        ov_int = "" if r["label"] == BASELINE else _interval(r["overhead_lo"], r["overhead_hi"])
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


def _java_line(j: pd.Series) -> str:
    """One mode against Kafka's producer-perf-test: the rates, their ratio, and what a low one means."""
    flag = (
        ""
        if j["ratio"] >= HARNESS_VS_JAVA_RATIO
        else f"  below {HARNESS_VS_JAVA_RATIO:g}: the harness is the bottleneck"
    )
    warm = "  (still warming up: measure longer)" if bool(j.get("java_still_warming", False)) else ""
    total = j.get("java_total_records_per_s", math.nan)
    return (
        f"  {j['label']:<12} eoslab {j['eoslab']:>8.0f}  java {j['java']:>8.0f} "
        + ("" if pd.isna(total) else f"({total:.0f})")
        + f"  ratio {j['ratio']:.2f}{flag}{warm}"
    )


def _java_lines(f: RunFigures) -> list[str]:
    if not len(f.java):
        return []
    return [
        f"Kafka's producer-perf-test, same settings and bytes, its rate after its first {JAVA_WARMUP_S:g} s report "
        "(the tool's own total, warm-up included, in brackets):",
        *(_java_line(j) for _, j in f.java.iterrows()),
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
    overhead against acks_all and whether this run resolves it, the Java peer, latency, takeaways."""
    lines = [_env_line(f.env), *_mode_lines(f), *_java_lines(f)]
    lines += cpeer_lines(f.cpeer, str(f.env.get("librdkafka_version", "?")))
    lines += cpu_lines(f.cpu, str(f.env.get("backend", "local")))
    lines += [*_latency_lines(f), "takeaways:"]
    lines += [f"- {t}" for t in takeaways(f)]
    lines.append(f"note: {TXN_NOTE}.")
    lines.append(f"note: {IDEMPOTENT_NOTE}.")
    return "\n".join(lines)


def report(spark: SparkSession, folder: str | Path) -> str:
    """``eoslab bench producers``' printout for the run in ``folder``."""
    return report_text(run_figures(load_runs(spark, folder)))
