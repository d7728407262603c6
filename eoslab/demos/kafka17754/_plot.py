"""The KAFKA-17754 experiments' requests as a timeline: the window from the lost request to the restart."""

from __future__ import annotations

from typing import Any

from eoslab.demos.kafka17754._librdkafka import LATE_CLIENT, Experiment

_NOISE = ("Fetch", "Heartbeat", "Metadata", "FindCoordinator", "ApiVersions", "OffsetFetch", "JoinGroup", "SyncGroup",
          "LeaveGroup", "(connect)", "ListOffsets")  # fmt: skip


def window(exp: Experiment) -> list[dict[str, Any]]:
    """The experiment's requests from the lost one to the processor's restart (its InitProducerId), without
    the consumer's traffic and the retried AddPartitionsToTxn answered CONCURRENT_TRANSACTIONS."""
    t = exp.trace
    start = next((i for i, r in enumerate(t) if "dropped" in r["fate"]), 0)
    end = next((i for i, r in enumerate(t) if i > start and r["api"] == "InitProducerId"), len(t) - 1)
    return [
        r
        for r in t[start : end + 1]
        if r["api"] not in _NOISE
        and not (
            r["api"] == "AddPartitionsToTxn" and (r.get("response") or {}).get("error") == "CONCURRENT_TRANSACTIONS"
        )
    ]


def plot(exp: Experiment, ax: Any = None) -> Any:
    """The experiment's window as a request timeline, the late copy and every refused request named."""
    from eoslab.faults import Trace

    rows = window(exp)
    ax = Trace(rows).plot(ax=ax)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    for i, r in enumerate(rows):
        err = (r.get("response") or {}).get("error")
        if r.get("client_id") == LATE_CLIENT:
            labels[i] = f"LATE COPY → {err}  " + labels[i]
        elif err and err != "NONE":
            labels[i] = f"{err}  " + labels[i]
        elif "dropped" in r["fate"]:
            labels[i] = "lost  " + labels[i]
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.set_title(f"KAFKA-17754, {exp.variant}, {exp.client}", fontsize=9)
    ax.figure.tight_layout()
    return ax
