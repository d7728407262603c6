"""Plots of module 06 (matplotlib over the small pandas results of the Spark aggregations).

Error bars are 95 % bootstrap intervals over a run's rounds (:mod:`eoslab.analysis._rounds`), one
colour per run and a legend naming it; an overhead whose interval holds 0 is drawn hollow: not resolved by
that run. Latency plots take one run (percentiles of two runs' samples pooled would be neither's). Titles
say what is plotted, never what it shows: the sentences under a plot are decided by its figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes

from eoslab.analysis._published import PUBLISHED
from eoslab.errors import DataError


def _ax(ax: Axes | None, size: tuple[float, float] = (7, 3.2)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size)[1]


def _columns(df: pd.DataFrame, value: str) -> pd.DataFrame:
    """``median``/``lo``/``hi`` whatever the table called them (``throughput``, ``overhead``, RunFigures.modes)."""
    names = {value: "median", f"{value}_lo": "lo", f"{value}_hi": "hi"}
    out = df.rename(columns={k: v for k, v in names.items() if k in df.columns})
    if "run" not in out.columns:
        out = out.assign(run="this run")
    return out


def _dodged(ax: Axes, t: pd.DataFrame, scale: float, hollow: pd.Series | None = None) -> list[str]:
    labels = list(dict.fromkeys(t["label"]))
    runs = list(dict.fromkeys(t["run"]))
    width = 0.6 / max(1, len(runs))
    for k, run in enumerate(runs):
        g = t[t["run"] == run].set_index("label").reindex(labels)
        x = np.arange(len(labels)) - 0.3 + width * (k + 0.5)
        y = g["median"] * scale
        err = np.array([(g["median"] - g["lo"]).fillna(0), (g["hi"] - g["median"]).fillna(0)]) * scale
        line = ax.errorbar(x, y, yerr=err, fmt="none", capsize=3, alpha=0.8)
        color = line.lines[2][0].get_color() if line.lines[2] else None
        filled = (
            ~(hollow.reindex(g.index).fillna(False).astype(bool)) if hollow is not None else pd.Series(True, g.index)
        )
        ax.scatter(x[filled.values], y[filled.values], color=color, zorder=3, label=str(run))
        ax.scatter(x[~filled.values], y[~filled.values], facecolors="white", edgecolors=color, zorder=3)
    ax.set_xticks(range(len(labels)), labels, rotation=30)
    ax.legend(fontsize=7, title="run", title_fontsize=7)
    return labels


def plot_throughput(tp: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Records/s per mode: the median over rounds, 95 % interval over rounds, one marker per run."""
    ax = _ax(ax)
    t = _columns(tp, "records_per_s")
    _dodged(ax, t, 1.0)
    ax.set_ylabel("records/s at saturation")
    ax.set_title("Throughput by producer mode (bars: 95 % interval over rounds)")
    ax.set_ylim(bottom=0)
    return ax


def plot_overhead(ov: pd.DataFrame, ax: Axes | None = None, **kw: Any) -> Axes:
    """Overhead vs acks=all per mode with its interval (hollow: not resolved), published figures as stars."""
    ax = _ax(ax)
    t = _columns(ov, "overhead")
    t = t[t["label"] != "acks_all"]
    unresolved = t.set_index("label").apply(lambda r: not (r["lo"] > 0 or r["hi"] < 0), axis=1)
    unresolved = unresolved[~unresolved.index.duplicated()]
    labels = _dodged(ax, t, 100.0, hollow=unresolved)
    for p in PUBLISHED:
        if p.value is not None and p.mode in labels:
            ax.scatter(
                [labels.index(p.mode)],
                [p.value * 100],
                marker="*",
                s=180,
                color="#dd8452",
                zorder=4,
                label=f"published: {p.mode} ≈ {p.value * 100:.0f} %",
            )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_ylabel("throughput overhead vs acks=all (%)")
    ax.set_title("Throughput overhead against acks=all (hollow: the interval holds 0)")
    ax.legend(fontsize=7, title="run", title_fontsize=7)
    return ax


def _run_name(df: pd.DataFrame, run: str | None) -> str:
    """The one run a latency table holds (named by its ``run`` column, or by ``run``); two runs are refused."""
    names = list(dict.fromkeys(df["run"])) if "run" in df.columns else []
    if len(names) > 1:
        raise DataError(
            f"This table holds {len(names)} runs ({', '.join(map(str, names))}): a latency plot shows one run; "
            "pick one with A.one_run(runs) first."
        )
    return str(run if run is not None else names[0] if names else "this run")


def plot_latency(
    pcts: pd.DataFrame, ax: Axes | None = None, title: str = "Ack latency at a fixed load", run: str | None = None
) -> Axes:
    """One run's latency percentiles per mode (bars: p50, p95, p99), the run named in the legend."""
    name = _run_name(pcts, run)
    ax = _ax(ax)
    cols = [c for c in pcts.columns if c.startswith("p") and c[1:].isdigit()]
    pcts.set_index("label")[cols].plot.bar(ax=ax, rot=30)
    ax.set_ylabel("ms")
    ax.set_title(title)
    ax.legend(fontsize=7, title=f"run {name}", title_fontsize=7)
    return ax


def plot_e2e_vs_commit(e2e: pd.DataFrame, ax: Axes | None = None, run: str | None = None, **kw: Any) -> Axes:
    """One run's end-to-end p50 and p99 against the commit interval, one colour per isolation level."""
    name = _run_name(e2e, run)
    ax = _ax(ax)
    t = e2e[e2e["commit_ms"] > 0].sort_values("commit_ms")
    for iso, g in t.groupby("isolation"):
        line = ax.plot(g["commit_ms"], g["p50"], marker="o", label=f"{iso} p50", **kw)[0]
        ax.plot(g["commit_ms"], g["p99"], marker="x", ls="--", color=line.get_color(), label=f"{iso} p99")
    ax.set_xlabel("commit interval (ms)")
    ax.set_ylabel("end-to-end latency (ms)")
    ax.set_title("End-to-end latency against the commit interval, by isolation level")
    ax.legend(fontsize=8, title=f"run {name}", title_fontsize=7)
    return ax
