"""Lab 06's reference figures and the figures each known wrong decision gives, from the raw Parquet with
pandas and numpy: what :mod:`eoslab.grading.lab06` compares an answer with, and what the held-out runs
(:mod:`eoslab.grading._heldout`) must tell apart.

A check names a wrong decision when the answer gives every figure that decision gives and no other
decision gives them too: where two coincide (on some seeds the Java tool's rows mixed in give the figures of
"ratio of medians"; on a loaded laptop's runs read_uncommitted's p50 and every kind's), no order of the list
names the learner's own, since the two answers are then the same numbers; only runs on which they differ
do. :func:`confusable` finds a pair of decisions that a set of runs cannot tell apart, and the held-out
runs are drawn until there is none: an answer undecided on the learner's runs is named on them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

REL_TOL = 1e-6  # the same arithmetic on the same numbers: only float rounding differs
PCT_REL_TOL = 0.02  # percentile_approx picks a sample, numpy interpolates: both bounded, plus this
PCT_ABS_TOL_MS = 0.5
TXN_BASELINE = "idempotent"
RIGHT = "right"
"""The key of the right figures in every answer set; every other key is a wrong decision's hint."""

Figures = dict[Any, Any]
"""Per key (a (run, label) or a label): a figure, or the (lower, higher) bounds of a percentile."""


def _harness_rounds(s: pd.DataFrame) -> pd.DataFrame:
    return s[(s.phase == "saturation") & (s.client == "eoslab") & (s["round"] >= 0)]


def _spread(rows: pd.DataFrame, by: list[str], centre: str = "median", col: str = "records_per_s") -> Figures:
    g = rows.groupby(by)[col]
    out = (g.max() - g.min()) / (g.median() if centre == "median" else g.mean())
    return {k: float(v) for k, v in out.items()}


def spread_answers(s: pd.DataFrame) -> dict[str, Figures]:
    """t1: the right spread per (run, label), and what each wrong choice of rows or centre gives."""
    sat = s[s.phase == "saturation"]
    return {
        RIGHT: _spread(_harness_rounds(s), ["run", "label"]),
        "the peers' rows (the Java tool's, client 'java', and rdkafka_performance's, client 'rdkafka_perf') are "
        "mixed in: they are not rounds of the harness": _spread(sat, ["run", "label"]),
        "only the Java tool's rows are left out: rdkafka_performance (client 'rdkafka_perf') is a peer too; keep "
        "client 'eoslab'": _spread(sat[sat.client != "java"], ["run", "label"]),
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


def cost_answers(s: pd.DataFrame, baseline: str = TXN_BASELINE) -> dict[str, Figures]:
    """t2: per transactional label, the right cost and what pooled, unpaired or Java-mixed answers give."""
    txn = sorted(s[(s["mode"] == "transactional") & (s.client == "eoslab")].label.unique())
    rounds = _harness_rounds(s)
    per_run = _per_round_cost(s, baseline).groupby(["run", "label"]).cost.median()
    med = rounds.groupby(["run", "label"]).records_per_s.median().unstack("label")
    unpaired = (1 - med.div(med[baseline], axis=0)).stack()
    means = rounds.groupby("label").records_per_s.mean()
    sat = s[s.phase == "saturation"]
    java_mixed = _per_round_cost(s, baseline, sat).groupby(["run", "label"]).cost.median()

    def across(per: pd.Series, how: str = "median") -> Figures:
        g = per.groupby(level="label")
        return {k: float(v) for k, v in (g.median() if how == "median" else g.mean()).items() if k in txn}

    return {
        RIGHT: across(per_run),
        "throughputs are pooled over runs before the ratio: laptops of different speed and runs of different "
        "length then weigh unevenly; take each run's ratio first": {
            k: float(1 - means[k] / means[baseline]) for k in txn
        },
        "the ratio is taken between medians over rounds, not round by round: a machine that drifts between "
        "rounds then counts as cost; divide by the baseline of the SAME round": across(unpaired),
        "the peers' rows (the Java tool's, rdkafka_performance's) are mixed in (they share round -1): keep the "
        "harness's rounds": across(java_mixed),
        "runs are combined with the mean: the median over runs lets no single laptop decide": across(per_run, "mean"),
    }


def _pct(v: pd.Series, q: float, method: str = "linear") -> float:
    return float(np.percentile(v.to_numpy(dtype=float), q, method=method))  # type: ignore[call-overload]


def _p99(v: pd.Series, method: str = "linear") -> float:
    return _pct(v, 99, method)


def tail_answers(samples: pd.DataFrame) -> dict[str, Figures]:
    """t3: per label, the right p99 and the pooled, mean-combined and wrong-kind ones, each as bounds (numpy's
    lower and higher interpolation: Spark's percentile_approx returns one of the samples)."""

    def per_run(rows: pd.DataFrame, method: str) -> pd.Series:
        return rows.groupby(["label", "run"]).latency_ms.apply(lambda v: _p99(v, method))

    def bounds(rows: pd.DataFrame, combine: str = "median", pooled: bool = False) -> Figures:
        if pooled:
            return {k: (_p99(g.latency_ms, "lower"), _p99(g.latency_ms, "higher")) for k, g in rows.groupby("label")}
        lo, hi = (getattr(per_run(rows, m).groupby(level="label"), combine)() for m in ("lower", "higher"))
        return {k: (float(lo[k]), float(hi[k])) for k in lo.index}

    ack = samples[samples.kind == "ack"]
    return {
        RIGHT: bounds(ack),
        "the samples of every run are pooled: the run with the most samples decides; take each run's p99 "
        "first, then the median over runs": bounds(ack, pooled=True),
        "runs are combined with the mean: one slow laptop pulls it up; take the median over runs": bounds(ack, "mean"),
        "end-to-end samples are mixed in: the producer waits for its ack (kind 'ack') only": bounds(
            samples[samples.kind != "ack"]
        ),
    }


def _txn_e2e(samples: pd.DataFrame, params: pd.DataFrame, kinds: tuple[str, ...] | None) -> pd.DataFrame:
    """The samples of transactional workloads (of ``kinds``; None: every kind), each with its commit_ms."""
    p = params[params.transactional & params.commit_ms.notna()][["run", "workload", "commit_ms"]]
    rows = samples if kinds is None else samples[samples.kind.isin(kinds)]
    return rows.merge(p, on=["run", "workload"])


def e2e_answers(samples: pd.DataFrame, params: pd.DataFrame) -> dict[str, Figures]:
    """t4: per commit interval (ms), the read_committed p50 of the transactional workloads, one vote per run: each
    run's p50 of an interval, then the median over runs (as t3 combines runs; module 06 never pools two runs'
    samples into one percentile). Beside it what pooling the runs' samples, a mean, the mean over runs or another
    kind of samples gives. Percentiles as bounds (numpy's lower and higher: percentile_approx returns a sample,
    F.median interpolates between the two), each run's bounds combined as its p50 is. The non-transactional rows
    kept show as a commit interval of their own (null), which the check says first."""

    def per_run(rows: pd.DataFrame, how: str) -> pd.Series:
        g = rows.groupby(["commit_ms", "run"]).latency_ms
        return g.mean() if how == "mean" else g.apply(lambda v: _pct(v, 50, how))

    def p50(rows: pd.DataFrame, mean: bool = False, combine: str = "median") -> Figures:
        if mean:
            m = getattr(per_run(rows, "mean").groupby(level="commit_ms"), combine)()
            return {float(k): float(v) for k, v in m.items()}
        lo, hi = (getattr(per_run(rows, q).groupby(level="commit_ms"), combine)() for q in ("lower", "higher"))
        return {float(k): (float(lo[k]), float(hi[k])) for k in lo.index}

    def pooled(rows: pd.DataFrame) -> Figures:
        g = rows.groupby("commit_ms").latency_ms
        return {float(k): (_pct(v, 50, "lower"), _pct(v, 50, "higher")) for k, v in g}

    rc = _txn_e2e(samples, params, ("e2e_read_committed",))
    return {
        RIGHT: p50(rc),
        "the samples of every run are pooled: the run with the most samples decides; take each run's p50 first, "
        "then the median over runs": pooled(rc),
        "runs are combined with the mean: one slow laptop pulls it up; take the median over runs": p50(
            rc, combine="mean"
        ),
        "the mean is taken for the median: an end-to-end latency has a long right tail (a slow commit holds "
        "every record of its transaction back), so the mean lies above the p50; take the p50": p50(rc, mean=True),
        "the read_uncommitted samples are taken: they do not wait for the commit marker; keep kind "
        "'e2e_read_committed'": p50(_txn_e2e(samples, params, ("e2e_read_uncommitted",))),
        "both isolation levels' end-to-end samples are mixed: keep kind 'e2e_read_committed' only": p50(
            _txn_e2e(samples, params, ("e2e_read_committed", "e2e_read_uncommitted"))
        ),
        "every kind of sample is in, the acks too: keep kind 'e2e_read_committed' only": p50(
            _txn_e2e(samples, params, None)
        ),
    }


def accepted(w: Any) -> tuple[float, float]:
    """The range of answers taken for the figure ``w``: a figure give or take float rounding, or a
    percentile's (lower, higher) bounds widened by what percentile_approx may differ by."""
    if isinstance(w, tuple):
        lo, hi = w
        return lo - max(PCT_ABS_TOL_MS, PCT_REL_TOL * abs(lo)), hi + max(PCT_ABS_TOL_MS, PCT_REL_TOL * abs(hi))
    tol = REL_TOL * max(1.0, abs(w))
    return w - tol, w + tol


def close(g: float, w: Any) -> bool:
    """Whether the answer ``g`` is taken for the figure ``w``."""
    lo, hi = accepted(w)
    return bool(lo <= g <= hi)


def _apart(a: Mapping[Any, Any], b: Mapping[Any, Any], keys: list[Any]) -> bool:
    """Some key on which no answer can be taken for both: one decision lacks it, or their ranges are disjoint."""
    for k in keys:
        if k not in a or k not in b:
            return True
        (alo, ahi), (blo, bhi) = accepted(a[k]), accepted(b[k])
        if ahi < blo or bhi < alo:
            return True
    return False


def confusable(summary: pd.DataFrame, samples: pd.DataFrame, params: pd.DataFrame | None = None) -> str | None:
    """The first two decisions (right or wrong) of a task that these runs cannot tell apart, as words, or
    None when every decision of every task gives figures no other decision's answer is taken for (t4's too
    when ``params`` is given)."""
    tasks = [("t1", spread_answers(summary)), ("t2", cost_answers(summary)), ("t3", tail_answers(samples))]
    if params is not None:
        tasks.append(("t4", e2e_answers(samples, params)))
    for task, answers in tasks:
        keys, names = list(answers[RIGHT]), list(answers)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                if not _apart(answers[a], answers[b], keys):
                    return f"{task}'s {a.split(':')[0]!r} and {b.split(':')[0]!r}"
    return None
