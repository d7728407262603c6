"""The class's figures read aloud and drawn: which mode to show, the sentences, the plot.

Pandas over the small results of :mod:`eoslab.analysis._class` (one row per machine and mode). The
sentences are decided by the numbers (a cost is a cost only where intervals say so, a learner is "in the
middle half" only between the quartiles), so the class notebook never makes a claim its data did not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from eoslab.errors import DataError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PUBLISHED_COMMIT_MS = 100
"""The commit interval of the published ≈3 % (Confluent, 2017): the mode to show when machines measured several."""


def pick_label(per_machine: pd.DataFrame) -> str:
    """The transactional mode the most machines measured; of those, the commit interval nearest the
    published figure's (a class's laptops ran the quick matrix or the default one)."""
    txn = per_machine[per_machine["mode"] == "transactional"]
    if txn.empty:
        raise DataError("No machine of the class measured a transactional mode: the runs hold no transactions.")
    counts = txn.groupby("label").agg(n=("learner", "nunique"), commit_ms=("commit_ms", "first"))
    counts["distance"] = (counts["commit_ms"] - PUBLISHED_COMMIT_MS).abs()
    return str(counts.sort_values(["n", "distance"], ascending=[False, True]).index[0])


def _rows(per_machine: pd.DataFrame, label: str) -> pd.DataFrame:
    rows = per_machine[per_machine["label"] == label].sort_values(["median", "learner"]).reset_index(drop=True)
    if rows.empty:
        measured = ", ".join(sorted(set(per_machine["label"])))
        raise DataError(f"No machine measured {label!r}: choose one of {measured}.")
    return rows


def _learner_sentence(rows: pd.DataFrame, dist: pd.Series, label: str, learner: str) -> str:
    mine = rows[rows["learner"] == learner]
    if mine.empty:
        return f"{learner} handed in no {label} rounds, so their machine is not placed."
    r = mine.iloc[0]
    rank = int(mine.index[0]) + 1
    slack = 1e-9  # a machine AT a quartile is inside: the quartile is its own (or an equal) median, up to rounding
    if r["median"] < dist["q25"] - slack:
        where = "below"
    elif r["median"] > dist["q75"] + slack:
        where = "above"
    else:
        where = "inside"
    interval = f"[{r['lo']:.1%}, {r['hi']:.1%}]" if pd.notna(r["lo"]) else "(too few rounds for an interval)"
    return (
        f"{learner}'s machine ({r['machine']}) measured {r['median']:.1%} {interval}: number {rank} of "
        f"{len(rows)} from the cheapest, {where} the class's middle half."
    )


def _resolved_sentence(resolved: int, machines: int) -> str:
    if resolved == machines:
        return f"Every machine resolves it: all {machines} intervals exclude 0."
    return (
        f"{resolved} of {machines} machine(s) resolve it (their interval excludes 0); on the other "
        f"{machines - resolved} the data cannot tell it from no cost."
    )


def class_sentences(
    per_machine: pd.DataFrame,
    distribution: pd.DataFrame,
    outliers: pd.DataFrame,
    label: str,
    learner: str | None = None,
) -> list[str]:
    """What the class's data says about ``label``, in sentences (and where ``learner`` stands)."""
    rows = _rows(per_machine, label)
    dist = distribution.set_index("label").loc[label]
    out = [
        f"{int(dist['machines'])} machine(s) measured {label}: the class's median overhead is {dist['median']:.1%} "
        f"(middle half {dist['q25']:.1%} to {dist['q75']:.1%}, all of them {dist['min']:.1%} to {dist['max']:.1%}).",
        _resolved_sentence(int(dist["resolved"]), int(dist["machines"])),
    ]
    if learner is not None:
        out.append(_learner_sentence(rows, dist, label, learner))
    mine = outliers[outliers["label"] == label]
    if mine.empty:
        out.append(f"No machine stands out for {label}: every interval reaches the class's fences.")
    else:
        named = "; ".join(f"{o.learner} ({o.machine}): {o.reason}" for o in mine.itertuples())
        out.append(f"{len(mine)} machine(s) stand out for {label}: {named}.")
    return out


def _colours(n: int) -> list[Any]:
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab10" if n <= 10 else "tab20" if n <= 20 else "viridis")
    return [cmap(i if n <= 20 else i / max(1, n - 1)) for i in range(n)]


def _machines_panel(ax: Axes, rows: pd.DataFrame, dist: pd.Series, learner: str | None, flagged: set[str]) -> None:
    ax.axvspan(dist["q25"] * 100, dist["q75"] * 100, color="grey", alpha=0.15, label="class's middle half")
    for fence in ("low_fence", "high_fence"):
        ax.axvline(dist[fence] * 100, color="grey", ls="--", lw=0.8)
    for i, (r, colour) in enumerate(zip(rows.itertuples(), _colours(len(rows)), strict=True)):
        err = np.array([[r.median - r.lo], [r.hi - r.median]]) * 100 if pd.notna(r.lo) else None
        star = r.learner == learner
        ax.errorbar(
            r.median * 100, i, xerr=err, fmt="*" if star else "o", ms=14 if star else 6, color=colour, capsize=3
        )
        if r.learner in flagged:
            ax.scatter(r.median * 100, i, s=260, facecolors="none", edgecolors="red", lw=1.5)
    ax.set_yticks(np.arange(len(rows)), [f"{r.learner} · {r.machine}" for r in rows.itertuples()], fontsize=8)
    ax.axvline(0, color="black", lw=0.6)
    ax.set_title("Per machine, 95 % interval over its rounds (dashed: the fences; red ring: stands out)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")


def _box_panel(ax: Axes, rows: pd.DataFrame, dist: pd.Series, learner: str | None) -> None:
    """The class's box from Spark's quartiles (whiskers to the farthest machines inside the fences, as Tukey
    drew them), and below it each machine's median as a dot in its colour."""
    m = rows["median"]
    inside = m[(m >= dist["low_fence"]) & (m <= dist["high_fence"])]
    stats = {
        "med": dist["median"],
        "q1": dist["q25"],
        "q3": dist["q75"],
        "whislo": inside.min(),
        "whishi": inside.max(),
    }
    ax.bxp([{k: v * 100 for k, v in stats.items()} | {"fliers": []}], positions=[0.5], orientation="horizontal")
    for i, (r, colour) in enumerate(zip(rows.itertuples(), _colours(len(rows)), strict=True)):
        star = r.learner == learner
        ax.scatter(
            r.median * 100, 0.06 * ((3 * i) % 5 - 2), marker="*" if star else "o", s=160 if star else 25, color=colour
        )
    ax.set_ylim(-0.35, 0.85)  # the box above, the dots below (jittered: machines with one median stay apart)
    ax.set_yticks([])
    ax.set_xlabel("machines' medians (%)")
    ax.set_title(f"the class: {len(rows)} machines" + (f" (★ {learner})" if learner else ""), fontsize=9)


def plot_class(
    per_machine: pd.DataFrame,
    distribution: pd.DataFrame,
    label: str,
    learner: str | None = None,
    outliers: pd.DataFrame | None = None,
) -> Figure:
    """Left: each machine's overhead for ``label`` with its 95 % interval (one colour per machine), the class's
    middle half shaded, its fences dashed, outliers ringed. Right: the distribution of the machines' medians
    (a box, each machine a dot in its colour). ``learner``'s machine is a star in both."""
    import matplotlib.pyplot as plt

    rows = _rows(per_machine, label)
    dist = distribution.set_index("label").loc[label]
    flagged = set() if outliers is None else set(outliers.loc[outliers["label"] == label, "learner"])
    fig, (ax, box) = plt.subplots(1, 2, figsize=(11, 0.35 * len(rows) + 2.2), width_ratios=(3, 1))
    _machines_panel(ax, rows, dist, learner, flagged)
    ax.set_xlabel(f"{label}: throughput overhead vs acks=all (%)")
    _box_panel(box, rows, dist, learner)
    fig.tight_layout()
    return fig
