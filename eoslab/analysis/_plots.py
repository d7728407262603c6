"""Plots of module 06 (matplotlib over the small pandas results of the Spark aggregations)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes

from eoslab.analysis._published import PUBLISHED


def _ax(ax: Axes | None, size: tuple[float, float] = (7, 3.2)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size)[1]


def plot_throughput(tp: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Records/s per mode, with the min–max range over runs as an error bar."""
    ax = _ax(ax)
    err = [tp["records_per_s"] - tp["min_records_per_s"], tp["max_records_per_s"] - tp["records_per_s"]]
    ax.bar(tp["label"], tp["records_per_s"], yerr=err, color="#4c72b0", capsize=3)
    ax.set_ylabel("records/s at saturation")
    ax.set_title("Throughput by producer mode (bars: min–max over runs)")
    ax.tick_params(axis="x", rotation=30)
    return ax


def plot_overhead(spread: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Median overhead vs acks=all per mode (whiskers: min–max over runs), published figures as markers."""
    ax = _ax(ax)
    x = list(spread["label"])
    err = [spread["median"] - spread["min"], spread["max"] - spread["median"]]
    ax.errorbar(x, spread["median"] * 100, yerr=[e * 100 for e in err], fmt="o", capsize=4, label="your runs")
    for p in PUBLISHED:
        if p.value is not None and p.mode in x:
            ax.scatter(
                [p.mode], [p.value * 100], marker="*", s=160, color="#dd8452", zorder=3, label=f"published: {p.mode}"
            )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_ylabel("throughput overhead vs acks=all (%)")
    ax.set_title("The cost of idempotence and transactions")
    ax.tick_params(axis="x", rotation=30)
    ax.legend(fontsize=8)
    return ax


def plot_latency(pcts: pd.DataFrame, ax: Axes | None = None, title: str = "Ack latency at a fixed load") -> Axes:
    ax = _ax(ax)
    cols = [c for c in pcts.columns if c.startswith("p") and c[1:].isdigit()]
    pcts.set_index("label")[cols].plot.bar(ax=ax, rot=30)
    ax.set_ylabel("ms")
    ax.set_title(title)
    return ax


def plot_e2e_vs_commit(e2e: pd.DataFrame, ax: Axes | None = None, **kw: Any) -> Axes:
    """End-to-end p50 and p99 against the commit interval, one line per isolation level."""
    ax = _ax(ax)
    t = e2e[e2e["commit_ms"] > 0].sort_values("commit_ms")
    for iso, g in t.groupby("isolation"):
        line = ax.plot(g["commit_ms"], g["p50"], marker="o", label=f"{iso} p50", **kw)[0]
        ax.plot(g["commit_ms"], g["p99"], marker="x", ls="--", color=line.get_color(), label=f"{iso} p99")
    ax.set_xlabel("commit interval (ms)")
    ax.set_ylabel("end-to-end latency (ms)")
    ax.set_title("read_committed waits for the commit; read_uncommitted does not")
    ax.legend(fontsize=8)
    return ax
