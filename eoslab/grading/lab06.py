"""Checks of lab 06 (the cost of exactly-once): each recomputes the figure from the raw Parquet
samples with pandas and numpy — an implementation independent of the learner's Spark code —
and compares. Each check stands alone: it reads the runs itself, whatever ran before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from eoslab.grading._checks import Verdict, guarded, verdict
from eoslab.runs import BASELINE, read_table

REL_TOL = 0.01  # throughput: a mean of the same numbers, so only rounding differs
OVERHEAD_TOL = 0.005  # half a percentage point
PCT_REL_TOL = 0.05  # percentile_approx vs numpy's interpolated percentile, on a few thousand samples
PCT_ABS_TOL_MS = 0.5


def _mapping(answer: Any, key: str, value: str) -> dict[Any, Any]:
    """A dict, a pandas DataFrame or a Spark DataFrame with columns ``key`` and ``value``."""
    if answer is None:
        raise ValueError("the answer is still None")
    if hasattr(answer, "toPandas"):
        answer = answer.toPandas()
    if isinstance(answer, pd.DataFrame):
        return {k: float(v) for k, v in zip(answer[key], answer[value], strict=False)}
    if isinstance(answer, Mapping):
        return {k: (float(v) if not isinstance(v, (tuple, list)) else v) for k, v in answer.items()}
    raise TypeError(f"expected a dict or a DataFrame with columns {key!r} and {value!r}, got {type(answer).__name__}")


def _fmt(value: Any) -> str:
    """A figure, or a tuple of them (t3's percentiles), to 4 significant digits."""
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(f"{float(v):.4g}" for v in value) + ")"
    return f"{value:.4g}"


def _compare(task: str, got: Mapping[Any, Any], want: Mapping[Any, Any], close: Any, what: str, hint: str) -> Verdict:
    missing = sorted(set(want) - set(got), key=str)
    wrong = {k: (got[k], want[k]) for k in want if k in got and not close(got[k], want[k])}
    if missing:
        return verdict(
            task, False, ok="", saw=f"no {what} for {missing}", expected=f"one per {sorted(want, key=str)}", hint=hint
        )
    if wrong:
        k, (g, w) = next(iter(wrong.items()))
        return verdict(
            task,
            False,
            ok="",
            saw=f"{what} {g!r} for {k!r} (and {len(wrong) - 1} more off)",
            expected=f"{_fmt(w)} recomputed from the raw samples",
            hint=hint,
        )
    return verdict(task, True, ok=f"{what} for {len(want)} modes match the raw samples.")


def _sat(root: str | Path | None) -> pd.DataFrame:
    s = read_table("summary", root)
    return s[(s.phase == "saturation") & (s.client == "eoslab")]


@guarded("t1")
def check_throughput(answer: Any, runs: str | Path | None = None) -> Verdict:
    """t1: mean records/s at saturation per mode (label), harness rows only."""
    want = _sat(runs).groupby("label")["records_per_s"].mean().to_dict()
    got = _mapping(answer, "label", "records_per_s")
    return _compare(
        "t1",
        got,
        want,
        lambda g, w: abs(g - w) <= REL_TOL * w,
        "records/s",
        "filter phase == 'saturation' and client == 'eoslab', then average records_per_s by label.",
    )


def expected_overheads(runs: str | Path | None = None) -> dict[str, float]:
    sat = _sat(runs)
    per_run = sat.groupby(["run", "label"])["records_per_s"].mean().unstack("label")
    ratio = 1 - per_run.div(per_run[BASELINE], axis=0)
    return {k: float(v) for k, v in ratio.median().items() if k != BASELINE}


def _median_bounds(runs: str | Path | None) -> dict[str, tuple[float, float]]:
    """With an even number of runs, Spark's percentile_approx(0.5) picks a middle value and pandas
    averages the two: either is a median."""
    sat = _sat(runs)
    per_run = sat.groupby(["run", "label"])["records_per_s"].mean().unstack("label")
    ratio = 1 - per_run.div(per_run[BASELINE], axis=0)
    lo, hi = ratio.quantile(0.5, interpolation="lower"), ratio.quantile(0.5, interpolation="higher")
    return {k: (float(lo[k]), float(hi[k])) for k in ratio.columns if k != BASELINE}


@guarded("t2")
def check_overheads(answer: Any, runs: str | Path | None = None) -> Verdict:
    """t2: per mode, the median over runs of 1 − records/s ÷ acks_all's records/s in the same run."""
    want = expected_overheads(runs)
    got = {k: v for k, v in _mapping(answer, "label", "overhead").items() if k != BASELINE}
    if got and all(abs(v) > 1.5 for v in got.values()):
        return verdict(
            "t2",
            False,
            ok="",
            saw=f"overheads like {next(iter(got.values())):.3g}",
            expected="fractions (0.03 for 3 %)",
            hint="divide by 100, or do not multiply by 100.",
        )
    bounds = _median_bounds(runs)
    inv = {v: k for k, v in want.items()}

    def close(g: float, w: float) -> bool:
        lo, hi = bounds[inv[w]]
        return lo - OVERHEAD_TOL <= g <= hi + OVERHEAD_TOL

    return _compare(
        "t2",
        got,
        want,
        close,
        "overhead",
        "divide each mode's throughput by acks_all's throughput of the SAME run, then take the median over runs.",
    )


def _close_pct(g: Any, w: Any) -> bool:
    pairs = zip(g, w, strict=False)
    return all(abs(float(a) - float(b)) <= max(PCT_ABS_TOL_MS, PCT_REL_TOL * float(b)) for a, b in pairs)


@guarded("t3")
def check_ack_percentiles(answer: Any, runs: str | Path | None = None) -> Verdict:
    """t3: per mode, (p50, p95, p99) of the ack latency samples (ms), over every run."""
    s = read_table("samples", runs)
    s = s[s.kind == "ack"]
    want = {k: tuple(np.percentile(g["latency_ms"], [50, 95, 99])) for k, g in s.groupby("label")}
    if answer is not None and hasattr(answer, "toPandas"):
        answer = answer.toPandas()
    if isinstance(answer, pd.DataFrame):
        answer = {r["label"]: (r["p50"], r["p95"], r["p99"]) for _, r in answer.iterrows()}
    got = _mapping(answer, "label", "p50")
    bad = [k for k, v in got.items() if not isinstance(v, (tuple, list, np.ndarray)) or len(v) != 3]
    if bad:
        return verdict(
            "t3",
            False,
            ok="",
            saw=f"{got[bad[0]]!r} for {bad[0]!r}",
            expected="(p50, p95, p99)",
            hint="percentile_approx('latency_ms', [0.5, 0.95, 0.99]) gives the three at once.",
        )
    return _compare(
        "t3",
        got,
        want,
        _close_pct,
        "(p50, p95, p99)",
        "use only kind == 'ack' samples, grouped by label, latency in ms.",
    )


@guarded("t4")
def check_e2e_by_commit(answer: Any, runs: str | Path | None = None) -> Verdict:
    """t4: per commit interval (ms), the read_committed end-to-end p50 (ms) of transactional workloads."""
    s, p = read_table("samples", runs), read_table("params", runs)
    p = p[p.transactional & p.commit_ms.notna()][["run", "workload", "commit_ms"]]
    s = s[s.kind == "e2e_read_committed"].merge(p, on=["run", "workload"])
    want = {float(k): float(np.percentile(g["latency_ms"], 50)) for k, g in s.groupby("commit_ms")}
    got = {float(k): v for k, v in _mapping(answer, "commit_ms", "p50").items()}
    return _compare(
        "t4",
        got,
        want,
        lambda g, w: abs(g - w) <= max(PCT_ABS_TOL_MS, PCT_REL_TOL * w),
        "read_committed p50",
        "join samples to params on (run, workload); keep transactional "
        "workloads and kind == 'e2e_read_committed'; p50 by commit_ms.",
    )
