"""Module 06's tables and sentences for ONE run: its frames picked out, fractions shown as percentages, and
the sentence under each figure decided by the figure itself (never fixed text that a run may contradict).

Every function here reads one run: a table that pooled the samples of two runs into one percentile would
mix two machines, or two rates, into a figure that neither of them measured (read_committed's p50 would
"fall" from 20 ms to 100 ms commits when the two intervals come from runs at different rates).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import pandas as pd

from eoslab.analysis._load import Runs
from eoslab.errors import DataError


class Figures(Protocol):
    """What module 06 reads of one run's figures: :class:`eoslab.analysis.RunFigures` (named here by its shape,
    so that this module and :mod:`eoslab.analysis._published`, which the report imports, need not import it)."""

    run: str
    env: pd.Series
    modes: pd.DataFrame
    java: pd.DataFrame
    resolvable: float
    rounds: int
    cpu: pd.DataFrame
    cpeer: pd.DataFrame


PERCENT_COLUMNS = ("median", "lo", "hi", "overhead", "overhead_lo", "overhead_hi", "half_width", "resolvable")
"""The columns :func:`as_percent` turns into percentages when present: every overhead figure of module 06."""
CLOSE = 0.10
"""Two latencies within 10 % of each other are called close: a p50 or p99 of one run moves by that much."""


def one_run(runs: Runs, run: str | None = None) -> Runs:
    """The four tables of one run only (the latest by ``started_at`` by default; ``run`` names another)."""
    from pyspark.sql import functions as F

    names = [r["run"] for r in runs.env.orderBy("started_at", "run").select("run").collect()]
    if not names:
        raise DataError("There are no runs to choose from: run `eoslab bench producers` first.")
    chosen = names[-1] if run is None else run
    if chosen not in names:
        raise DataError(f"There is no run {chosen!r}: choose one of {', '.join(names)}.")
    keep = F.col("run") == chosen
    return Runs(runs.params.where(keep), runs.summary.where(keep), runs.samples.where(keep), runs.env.where(keep))


def percent(x: Any, digits: int = 1) -> str:
    """A fraction as a signed percentage, ``0.369`` → ``"+36.9 %"``; ``"—"`` for a missing figure."""
    if x is None or (isinstance(x, float) and math.isnan(x)) or pd.isna(x):
        return "—"
    return f"{float(x) * 100:+.{digits}f} %"


def as_percent(df: pd.DataFrame, columns: Iterable[str] | None = None, digits: int = 1) -> pd.DataFrame:
    """A copy of ``df`` for display, its overhead columns (``columns``, or those of :data:`PERCENT_COLUMNS` it
    has) as percentages (:func:`percent`); the figures themselves stay fractions in the package."""
    out = df.copy()
    for c in [c for c in (PERCENT_COLUMNS if columns is None else columns) if c in out.columns]:
        out[c] = out[c].map(lambda x: percent(x, digits))
    return out


def _ms(x: float) -> str:
    return f"{x:.0f} ms" if x >= 10 else f"{x:.1f} ms"


def _e2e_pivot(e2e: pd.DataFrame, stat: str) -> pd.DataFrame:
    """Per commit interval (transactional workloads only), ``stat`` of each isolation level."""
    if "run" in e2e.columns and e2e["run"].nunique() > 1:
        raise DataError("These end-to-end figures hold several runs: pick one with A.one_run(runs) first.")
    t = e2e[e2e["commit_ms"] > 0]
    return t.pivot_table(index="commit_ms", columns="isolation", values=stat).sort_index()


def _versus(t: pd.DataFrame, stat: str) -> str:
    """read_committed's ``stat`` against read_uncommitted's at every commit interval, decided per interval."""
    above = [ms for ms, r in t.iterrows() if r["read_committed"] > r["read_uncommitted"] * (1 + CLOSE)]
    pairs = "; ".join(
        f"{ms:g} ms: {_ms(r['read_committed'])} against {_ms(r['read_uncommitted'])}" for ms, r in t.iterrows()
    )
    if len(above) == len(t):
        return f"read_committed's {stat} is above read_uncommitted's at every commit interval ({pairs})."
    if not above:
        return (
            f"read_committed's {stat} is not clearly above read_uncommitted's at any commit interval ({pairs}): "
            f"in this run's {stat}, read_committed did not show its wait for the commit marker."
        )
    at = ", ".join(f"{a:g}" for a in above)
    return f"read_committed's {stat} is clearly above read_uncommitted's at {at} ms only ({pairs})."


def _growth(t: pd.DataFrame) -> str:
    """Whether read_committed's p50 grew with the commit interval: claimed only when it rose at every step; when
    it did not, how small the predicted growth is (half the difference of the intervals, at the median)."""
    rc = t["read_committed"]
    steps = ", ".join(f"{ms:g} ms → {_ms(v)}" for ms, v in rc.items())
    if len(rc) < 2:
        return f"This run has one commit interval ({steps}): it cannot say how the latency changes with it."
    if all(b > a for a, b in zip(rc, rc.iloc[1:], strict=False)):
        return f"read_committed's p50 grew with the commit interval in this run ({steps})."
    first, last = rc.index[0], rc.index[-1]
    return (
        f"read_committed's p50 did not grow at every step of the commit interval in this run ({steps}): "
        f"the mechanism predicts only +{(last - first) / 2:g} ms at the median from {first:g} ms to {last:g} ms "
        "(half the difference of the intervals), less than a commit's own time and the drift from one window to "
        "the next can move it; the extra wait below compares the two isolation levels within one window."
    )


def _wait(t: pd.DataFrame) -> str:
    """read_committed's extra wait at the median against half the commit interval (a uniform wait's median)."""
    extra = "; ".join(
        f"{ms:g} ms: {r['read_committed'] - r['read_uncommitted']:+.0f} ms (half the interval: {ms / 2:g} ms)"
        for ms, r in t.iterrows()
    )
    return f"read_committed's extra wait at the median, per commit interval: {extra}."


def e2e_sentences(e2e: pd.DataFrame) -> list[str]:
    """What one run's end-to-end table (:func:`e2e_by_commit_interval` of ONE run, pandas) shows: read_committed
    against read_uncommitted at each commit interval (p50 and p99), whether read_committed's p50 grew with the
    interval, and its extra wait against half the interval."""
    p50, p99 = _e2e_pivot(e2e, "p50"), _e2e_pivot(e2e, "p99")
    if not {"read_committed", "read_uncommitted"} <= set(p50.columns) or p50.empty:
        return ["This run has no end-to-end samples of transactional workloads at both isolation levels."]
    return [_versus(p50, "p50"), _versus(p99, "p99"), _growth(p50), _wait(p50)]


def commit_table(modes: pd.DataFrame) -> pd.DataFrame:
    """Per transactional mode of a run (``RunFigures.modes``): commits per slice, how long a transaction
    lasted at saturation, the commits per second that gives, and the 1000 / commit_ms its interval names."""
    t = modes.dropna(subset=["commit_ms"]) if "commit_ms" in modes else modes.iloc[0:0]
    t = t[t["commit_ms"] > 0].dropna(subset=["transaction_ms"])
    out = t[["label", "commit_ms", "commits_per_slice", "transaction_ms"]].copy()
    out["commits_per_s"] = 1000 / out["transaction_ms"]
    out["commits_per_s_named"] = 1000 / out["commit_ms"]
    return out.reset_index(drop=True)


def commit_sentences(modes: pd.DataFrame) -> list[str]:
    """Per transactional mode: whether it committed less often than its interval names (decided per mode)."""
    out = []
    for _, r in commit_table(modes).iterrows():
        named, real = r["commits_per_s_named"], r["commits_per_s"]
        head = f"{r['label']}: {real:.1f} commits per second at saturation"
        if real < named * (1 - CLOSE):
            out.append(
                f"{head}, below the {named:g} a {r['commit_ms']:g} ms interval names: a transaction lasted "
                f"{r['transaction_ms']:.0f} ms, its interval plus draining what the client had buffered."
            )
        else:
            out.append(f"{head}, about the {named:g} its {r['commit_ms']:g} ms interval names.")
    return out or ["This run has no transactional mode that committed at saturation."]


def _yours(modes: pd.DataFrame) -> pd.Series:
    return modes.set_index("label")["overhead"]


def beside_class(spread: pd.DataFrame, modes: pd.DataFrame) -> pd.DataFrame:
    """The class's spread (:func:`overhead_spread`, pandas) with your run's overhead per mode (``yours``,
    NaN for a mode your run did not measure) and where it falls among the class's runs."""
    out = spread.copy()
    yours = _yours(modes)
    out["yours"] = out["label"].map(yours)

    def where(r: pd.Series) -> str:
        if pd.isna(r["yours"]):
            return "not in your run"
        if r["yours"] < r["min"]:
            return "below every run of the class"
        if r["yours"] > r["max"]:
            return "above every run of the class"
        return "within the class's range"

    out["you"] = out.apply(where, axis=1)
    return out


def class_overheads(modes: pd.DataFrame) -> dict[str, float]:
    """Your run's overheads to generate a class around (:func:`generate_class`'s ``overheads``), modes
    without a figure left to the model."""
    return {k: float(v) for k, v in _yours(modes).items() if not pd.isna(v)}


def class_sentence(table: pd.DataFrame, centred: Sequence[str]) -> str:
    """One sentence under the class table: it is made up, around which of your figures, and what it shows."""
    mine = ", ".join(centred) if centred else "none"
    costs = table[~table["label"].isin(["acks_all", "acks1"])]  # the baseline, and another durability
    spread = costs.dropna(subset=["q25", "q75"])
    widest = spread.assign(w=spread["q75"] - spread["q25"]).sort_values("w").iloc[-1] if len(spread) else None
    width = (
        ""
        if widest is None
        else f" (the widest middle half: {widest['label']}, {percent(widest['q25'])} to {percent(widest['q75'])})"
    )
    n = int(table["learners"].max()) if "learners" in table and len(table) else 0
    others = [k for k in costs["label"] if k not in centred]
    model = f" and the model's for {', '.join(others)}" if others else ""
    return (
        f"This class is made up: {n} generated laptops whose true overheads are your run's for {mine}{model}; "
        f"what it shows is how far one cost spreads between machines from noise and drift alone{width}, not what "
        "exactly-once costs. A real class also differs in cores, load and versions."
    )


def resolution(fig: Figures) -> str:
    """The smallest overhead one run resolves (the half-width of its intervals), as a sentence."""
    if math.isnan(fig.resolvable):
        return f"This run ({fig.rounds} rounds) has no intervals: it needs at least 3 rounds to resolve anything."
    return (
        f"This run ({fig.rounds} rounds) resolves overheads larger than about ±{abs(fig.resolvable) * 100:.1f} % "
        "(the half-width of its intervals); a smaller cost is one it cannot tell from none."
    )
