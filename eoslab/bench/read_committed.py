"""Module 04's short measurement: read_committed end-to-end latency against the commit interval.

Module 06's harness (:func:`eoslab.bench._harness.fixed_load`) at a small fixed load: a
transactional producer commits every T ms while a read_committed and a read_uncommitted
consumer (both set explicitly) stamp each record's arrival. A record becomes readable under
read_committed only once its transaction's COMMIT marker is written, so its latency grows
with T (about T/2 on average, plus the commit itself); read_uncommitted sees it at once.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from eoslab.bench import _harness
from eoslab.runs import Workload

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

INTERVALS_MS = (50, 200, 800)
RATE = 200  # records/s: far below saturation, so latency measures the transaction, not a queue
DURATION_S = 3.0  # 600 records per interval: p50 and p90 are steady, p99 rests on 6 records


def e2e_vs_commit_interval(
    cluster: Cluster,
    intervals_ms: tuple[int, ...] = INTERVALS_MS,
    rate: int = RATE,
    duration_s: float = DURATION_S,
) -> pd.DataFrame:
    """Per commit interval and isolation level: records, p50/p90/p99/max end-to-end latency (ms)."""
    import pandas as pd

    rows = []
    for ms in intervals_ms:
        w = Workload("transactional", commit_ms=ms, rate=rate, duration_s=duration_s, partitions=1)
        topic = f"rc-latency-{ms}ms-{uuid.uuid4().hex[:6]}"
        cluster.admin.create_topic(topic, partitions=1)
        s = _harness.fixed_load(cluster.bootstrap_servers(), topic, w)
        df = pd.DataFrame({"kind": s.kind, "latency_ms": s.latency_ms})
        for iso in _harness.ISOLATIONS:
            lat = df[df["kind"] == f"e2e_{iso}"]["latency_ms"]
            rows.append(
                {
                    "commit_interval_ms": ms,
                    "isolation": iso,
                    "records": len(lat),
                    "p50_ms": lat.quantile(0.5),
                    "p90_ms": lat.quantile(0.9),
                    "p99_ms": lat.quantile(0.99),
                    "max_ms": lat.max(),
                }
            )
        cluster.admin.delete_topic(topic)
    return pd.DataFrame(rows).round(1)


def plot_e2e(df: pd.DataFrame, ax: object = None) -> object:
    """p50 and p99 against the commit interval, one line per isolation level."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.4))
    for iso, d in df.groupby("isolation"):
        ax.plot(d["commit_interval_ms"], d["p50_ms"], "o-", label=f"{iso} p50")  # type: ignore[attr-defined]
        ax.plot(d["commit_interval_ms"], d["p99_ms"], "s--", label=f"{iso} p99")  # type: ignore[attr-defined]
    ax.set_xlabel("commit interval (ms)")  # type: ignore[attr-defined]
    ax.set_ylabel("end-to-end latency (ms)")  # type: ignore[attr-defined]
    ax.legend(fontsize=8)  # type: ignore[attr-defined]
    return ax
