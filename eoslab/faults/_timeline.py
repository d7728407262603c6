"""The trace on a time axis: when each request left and when (or whether) its answer came back.

A sequence diagram shows the order; this shows the gaps. After a lost acknowledgement the
gap before the retry is the client's ``socket.timeout.ms``, which the learner can read off
the figure. A pure function of trace rows, like :mod:`eoslab.faults._render`.
"""

from __future__ import annotations

from typing import Any

from eoslab.faults._render import request_label
from eoslab.faults._summary import EOS_API_NAMES

_LOST_FATES = ("response dropped", "request dropped", "connection cut")


def _draw_request(ax: Any, i: int, r: dict[str, Any], t0: float) -> str:
    """Row ``i``: the request's bar (a red ✕ at its end when the answer was lost); returns its y label."""
    start = r["time"] - t0
    end = (r["response_time"] - t0) if r.get("response_time") else start
    lost = r.get("fate", "").startswith(_LOST_FATES)
    replay = r.get("via") == "proxy"
    color = "#c00" if lost else ("#777" if replay else "#4c72b0")
    ax.plot([start, end], [i, i], color=color, linewidth=4, solid_capstyle="butt")
    ax.plot([start], [i], marker="o", color=color, markersize=5)
    if lost:
        ax.plot([end], [i], marker="x", color="#c00", markersize=10, markeredgewidth=2)
    who = "proxy replay" if replay else f"broker {r['broker']}"
    return f"{request_label(r)[:48]}  ({who})"


def plot_timeline(rows: list[dict[str, Any]], *, ax: Any = None, all_apis: bool = False) -> Any:
    """One bar per request, from the request to its response; a lost answer ends in a red ✕."""
    import matplotlib.pyplot as plt

    rows = [r for r in rows if all_apis or r["api"] in EOS_API_NAMES]
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.45 * max(len(rows), 1) + 1.2))
    if not rows:
        ax.text(0.5, 0.5, "no requests in this trace", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return ax
    t0 = min(r["time"] for r in rows)
    labels = [_draw_request(ax, i, r, t0) for i, r in enumerate(rows)]
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()  # the first request on top, as in the sequence diagram
    ax.set_xlabel("seconds since the first request")
    ax.grid(axis="x", linestyle=":", linewidth=0.6)
    ax.set_title("requests (bar: until the answer; red ✕: the answer never reached the client)", fontsize=9)
    ax.figure.tight_layout()
    return ax
