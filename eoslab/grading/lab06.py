"""Checks of lab 06 (the cost of exactly-once).

Tasks 1-3 ask for a FUNCTION of the runs' DataFrames, not a value: the check calls it on the
learner's own runs and on held-out runs it makes up at that moment (:mod:`eoslab.grading._heldout`:
several runs of uneven length, the Java tool's rows, fixed-load rows, a drifting machine), and
recomputes the expected figures from the raw Parquet with pandas and numpy — an implementation
independent of the learner's Spark code. Each task leaves a decision to the learner (which rows,
which baseline, how to combine runs); when an answer matches a known wrong decision, the hint names it.
Each check stands alone: it reads the runs itself, whatever ran before it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eoslab.grading import _heldout
from eoslab.grading._checks import Verdict, guarded, verdict
from eoslab.runs import read_table, runs_dir

REL_TOL = 1e-6  # the same arithmetic on the same numbers: only float rounding differs
PCT_REL_TOL = 0.02  # percentile_approx picks a sample, numpy interpolates: both bounded, plus this
PCT_ABS_TOL_MS = 0.5
TXN_BASELINE = "idempotent"


# -- the reference figures (pandas), and the wrong decisions they are told apart from -----------------------


def _harness_rounds(s: pd.DataFrame) -> pd.DataFrame:
    return s[(s.phase == "saturation") & (s.client == "eoslab") & (s["round"] >= 0)]


def _spread(rows: pd.DataFrame, by: list[str], centre: str = "median", col: str = "records_per_s") -> dict[Any, float]:
    g = rows.groupby(by)[col]
    out = (g.max() - g.min()) / (g.median() if centre == "median" else g.mean())
    return {k: float(v) for k, v in out.items()}


def spread_answers(s: pd.DataFrame) -> dict[str, dict[Any, float]]:
    """t1: the right spread per (run, label), and what each wrong choice of rows or centre gives."""
    sat = s[s.phase == "saturation"]
    return {
        "right": _spread(_harness_rounds(s), ["run", "label"]),
        "the Java tool's rows (client 'java') are mixed in: they are not rounds of the harness": _spread(
            sat, ["run", "label"]
        ),
        "the fixed-load rows (phase 'fixed_load') are mixed in: a fixed load is not a throughput": _spread(
            s[s.client == "eoslab"], ["run", "label"]
        ),
        "every row of the summary is in: keep the harness's saturation rounds only": _spread(s, ["run", "label"]),
        "the spread is divided by the mean: divide by the median over rounds": _spread(
            _harness_rounds(s), ["run", "label"], "mean"
        ),
        "records counts what a slice sent, and slices differ in length (a slice's timer runs to its last ack): "
        "take records_per_s": _spread(_harness_rounds(s), ["run", "label"], col="records"),
    }


def _per_round_cost(s: pd.DataFrame, baseline: str, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    r = _harness_rounds(s) if rows is None else rows
    base = r[r.label == baseline][["run", "round", "records_per_s"]].rename(columns={"records_per_s": "base"})
    out = r.merge(base, on=["run", "round"])
    return out.assign(cost=1 - out.records_per_s / out.base)


def cost_answers(s: pd.DataFrame, baseline: str = TXN_BASELINE) -> dict[str, dict[Any, float]]:
    """t2: per transactional label, the right cost and what pooled, unpaired or Java-mixed answers give."""
    txn = sorted(s[(s["mode"] == "transactional") & (s.client == "eoslab")].label.unique())
    rounds = _harness_rounds(s)
    per_run = _per_round_cost(s, baseline).groupby(["run", "label"]).cost.median()
    med = rounds.groupby(["run", "label"]).records_per_s.median().unstack("label")
    unpaired = (1 - med.div(med[baseline], axis=0)).stack()
    means = rounds.groupby("label").records_per_s.mean()
    sat = s[s.phase == "saturation"]
    java_mixed = _per_round_cost(s, baseline, sat).groupby(["run", "label"]).cost.median()

    def across(per: pd.Series, how: str = "median") -> dict[Any, float]:
        g = per.groupby(level="label")
        return {k: float(v) for k, v in (g.median() if how == "median" else g.mean()).items() if k in txn}

    return {
        "right": across(per_run),
        "throughputs are pooled over runs before the ratio: laptops of different speed and runs of different "
        "length then weigh unevenly; take each run's ratio first": {
            k: float(1 - means[k] / means[baseline]) for k in txn
        },
        "the ratio is taken between medians over rounds, not round by round: a machine that drifts between "
        "rounds then counts as cost; divide by the baseline of the SAME round": across(unpaired),
        "the Java tool's rows are mixed in (they share round -1): keep the harness's rounds": across(java_mixed),
        "runs are combined with the mean: the median over runs lets no single laptop decide": across(per_run, "mean"),
    }


def _p99(v: pd.Series, method: str = "linear") -> float:
    return float(np.percentile(v.to_numpy(dtype=float), 99, method=method))  # type: ignore[call-overload]


def tail_answers(samples: pd.DataFrame) -> dict[str, dict[Any, Any]]:
    """t3: per label, the right p99 and the pooled, mean-combined and wrong-kind ones, each as bounds (numpy's
    lower and higher interpolation: Spark's percentile_approx returns one of the samples)."""

    def per_run(rows: pd.DataFrame, method: str) -> pd.Series:
        return rows.groupby(["label", "run"]).latency_ms.apply(lambda v: _p99(v, method))

    def bounds(rows: pd.DataFrame, combine: str = "median", pooled: bool = False) -> dict[Any, tuple[float, float]]:
        if pooled:
            return {k: (_p99(g.latency_ms, "lower"), _p99(g.latency_ms, "higher")) for k, g in rows.groupby("label")}
        lo, hi = (getattr(per_run(rows, m).groupby(level="label"), combine)() for m in ("lower", "higher"))
        return {k: (float(lo[k]), float(hi[k])) for k in lo.index}

    ack = samples[samples.kind == "ack"]
    return {
        "right": bounds(ack),
        "the samples of every run are pooled: the run with the most samples decides; take each run's p99 "
        "first, then the median over runs": bounds(ack, pooled=True),
        "runs are combined with the mean: one slow laptop pulls it up; take the median over runs": bounds(ack, "mean"),
        "end-to-end samples are mixed in: the producer waits for its ack (kind 'ack') only": bounds(
            samples[samples.kind != "ack"]
        ),
    }


# -- reading an answer --------------------------------------------------------------------------------------


def _frame(answer: Any, needed: tuple[str, ...], what: str) -> pd.DataFrame:
    if answer is None:
        raise ValueError("the function returned None")
    if hasattr(answer, "toPandas"):
        answer = answer.toPandas()
    if not isinstance(answer, pd.DataFrame):
        raise TypeError(f"expected a DataFrame with columns {', '.join(needed)}, got {type(answer).__name__}")
    missing = [c for c in needed if c not in answer.columns]
    if missing:
        raise _Wrong(
            f"columns {list(answer.columns)}",
            f"columns {', '.join(needed)} ({what})",
            f"name the result's columns {', '.join(needed)}.",
        )
    return answer


class _Wrong(Exception):
    def __init__(self, saw: str, expected: str, hint: str) -> None:
        super().__init__(hint)
        self.saw, self.expected, self.hint = saw, expected, hint


def _close(g: float, w: Any) -> bool:
    if isinstance(w, tuple):  # bounds of a percentile
        lo, hi = w
        return lo - max(PCT_ABS_TOL_MS, PCT_REL_TOL * lo) <= g <= hi + max(PCT_ABS_TOL_MS, PCT_REL_TOL * hi)
    return bool(abs(g - w) <= REL_TOL * max(1.0, abs(w)))


def _judge(
    got: Mapping[Any, float],
    answers: Mapping[str, Mapping[Any, Any]],
    where: str,
    what: str,
    hint: str,
) -> None:
    want = answers["right"]
    missing = [k for k in want if k not in got]
    if missing:
        raise _Wrong(f"no {what} for {missing[0]!r} in {where}", f"one per {sorted(want, key=str)}", hint)
    wrong = [k for k in want if not _close(got[k], want[k])]
    if not wrong:
        return
    for why, alt in answers.items():  # a wrong decision is named only when it gives every figure the answer gave
        if why != "right" and all(k in alt and _close(got[k], alt[k]) for k in want):
            raise _Wrong(f"{what} {got[wrong[0]]:.4g} for {wrong[0]!r} in {where}", "another figure", why + ".")
    w = want[wrong[0]]
    shown = f"{w[0]:.4g}…{w[1]:.4g}" if isinstance(w, tuple) else f"{w:.4g}"
    raise _Wrong(
        f"{what} {got[wrong[0]]:.4g} for {wrong[0]!r} in {where}", f"{shown} recomputed from the raw rows", hint
    )


def _call(fn: Any, name: str, *args: Any) -> Any:
    if not callable(fn):
        raise _Wrong(
            f"{type(fn).__name__}", f"the function {name}", f"pass the function {name} itself, not its result."
        )
    return fn(*args)


def _run_both(
    task: str,
    runs: str | Path | None,
    judge_one: Callable[[Path, Any, str], None],
    ok: str,
) -> Verdict:
    """Judge the answer on the learner's runs, then on fresh held-out runs; a wrong decision's hint wins."""
    root, seed = _heldout.heldout()
    try:
        judge_one(runs_dir(runs), None, "your runs")
        judge_one(root, _heldout.load(root), f"the held-out runs (seed {seed})")
    except _Wrong as w:
        return verdict(task, False, ok="", saw=w.saw, expected=w.expected, hint=w.hint)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return verdict(task, True, ok=ok)


def _spark_runs(base: Path, loaded: Any) -> Any:
    if loaded is not None:
        return loaded
    return _heldout.load(base)


# -- the tasks ---------------------------------------------------------------------------------------------


@guarded("t1")
def check_round_spread(fn: Any, runs: str | Path | None = None) -> Verdict:
    """t1: ``fn(summary)`` → per run and mode, (max − min) ÷ median of the harness's throughput over rounds."""

    def one(base: Path, loaded: Any, where: str) -> None:
        got_df = _frame(
            _call(fn, "round_spread", _spark_runs(base, loaded).summary), ("run", "label", "spread"), "per run and mode"
        )
        got = {(r.run, r.label): float(r.spread) for r in got_df.itertuples()}
        _judge(
            got,
            spread_answers(read_table("summary", base)),
            where,
            "spread",
            "the rounds of the harness at saturation, per run and mode: (max − min) ÷ median of records_per_s.",
        )

    return _run_both("t1", runs, one, "the spread over rounds matches, on your runs and on held-out runs.")


@guarded("t2")
def check_transaction_cost(fn: Any, baseline: Any, runs: str | Path | None = None) -> Verdict:
    """t2: the baseline that isolates a transaction's cost, and ``fn(summary, baseline)`` → per transactional
    mode, the median over runs of each run's median over rounds of 1 − throughput ÷ the baseline's."""
    if baseline != TXN_BASELINE:
        why = {
            "acks_all": "acks_all has no idempotence: against it a transaction's cost includes idempotence's. Every "
            "transactional producer is idempotent; compare with the mode that differs by the transaction only.",
            "acks1": "acks1 is another durability (one replica acknowledges): it is not the same producer minus "
            "the transaction.",
        }.get(
            str(baseline), "compare with the mode that differs from a transactional producer by the transaction only."
        )
        return verdict("t2", False, ok="", saw=f"BASELINE = {baseline!r}", expected="another baseline", hint=why)

    def one(base: Path, loaded: Any, where: str) -> None:
        got_df = _frame(
            _call(fn, "transaction_cost", _spark_runs(base, loaded).summary, baseline), ("label", "cost"), "per mode"
        )
        if got_df.label.duplicated().any():
            raise _Wrong(
                f"{got_df.label.duplicated().sum()} repeated labels in {where}",
                "one row per transactional mode",
                "combine the runs: each run's cost first, then the median over runs.",
            )
        got = {r.label: float(r.cost) for r in got_df.itertuples()}
        answers = cost_answers(read_table("summary", base), baseline)
        extra = sorted(set(got) - set(answers["right"]))
        if extra:
            raise _Wrong(
                f"a cost for {extra[0]!r} in {where}",
                f"one row per transactional mode: {', '.join(sorted(answers['right']))}",
                "keep the transactional modes only (mode 'transactional'): the others have no transaction to cost.",
            )
        _judge(
            got,
            answers,
            where,
            "cost",
            "per run and round, 1 − throughput ÷ the baseline's throughput in that round; the median over the "
            "run's rounds; then the median over runs.",
        )

    return _run_both(
        "t2", runs, one, "the baseline is idempotent, and the costs match on your runs and on held-out runs."
    )


@guarded("t3")
def check_ack_tail(fn: Any, runs: str | Path | None = None) -> Verdict:
    """t3: ``fn(samples)`` → per mode, the median over runs of each run's p99 ack latency (ms)."""

    def one(base: Path, loaded: Any, where: str) -> None:
        got_df = _frame(_call(fn, "ack_tail", _spark_runs(base, loaded).samples), ("label", "p99"), "per mode")
        got = {r.label: float(r.p99) for r in got_df.itertuples()}
        _judge(
            got,
            tail_answers(read_table("samples", base)),
            where,
            "p99",
            "each run's p99 of the ack samples first (percentile_approx by run and label), then the median over runs.",
        )

    return _run_both("t3", runs, one, "the typical p99 matches on your runs and on held-out runs of uneven length.")


def _mapping(answer: Any, key: str, value: str) -> dict[Any, Any]:
    """A dict, a pandas DataFrame or a Spark DataFrame with columns ``key`` and ``value``."""
    if answer is None:
        raise ValueError("the answer is still None")
    if hasattr(answer, "toPandas"):
        answer = answer.toPandas()
    if isinstance(answer, pd.DataFrame):
        return {k: float(v) for k, v in zip(answer[key], answer[value], strict=False)}
    if isinstance(answer, Mapping):
        return {k: float(v) for k, v in answer.items()}
    raise TypeError(f"expected a dict or a DataFrame with columns {key!r} and {value!r}, got {type(answer).__name__}")


@guarded("t4")
def check_e2e_by_commit(answer: Any, runs: str | Path | None = None) -> Verdict:
    """t4: per commit interval (ms), the read_committed end-to-end p50 (ms) of transactional workloads."""
    s, p = read_table("samples", runs), read_table("params", runs)
    p = p[p.transactional & p.commit_ms.notna()][["run", "workload", "commit_ms"]]
    s = s[s.kind == "e2e_read_committed"].merge(p, on=["run", "workload"])
    want = {float(k): float(np.percentile(g["latency_ms"], 50)) for k, g in s.groupby("commit_ms")}
    got = {float(k): v for k, v in _mapping(answer, "commit_ms", "p50").items()}
    missing = sorted(set(want) - set(got))
    hint = (
        "join samples to params on (run, workload); keep transactional "
        "workloads and kind == 'e2e_read_committed'; p50 by commit_ms."
    )
    if missing:
        return verdict("t4", False, ok="", saw=f"no p50 for {missing}", expected=f"one per {sorted(want)}", hint=hint)
    for k, w in want.items():
        if abs(got[k] - w) > max(PCT_ABS_TOL_MS, 0.05 * w):
            return verdict(
                "t4", False, ok="", saw=f"read_committed p50 {got[k]:.4g} for {k!r}", expected=f"{w:.4g}", hint=hint
            )
    return verdict("t4", True, ok=f"read_committed p50 for {len(want)} commit intervals match the raw samples.")
