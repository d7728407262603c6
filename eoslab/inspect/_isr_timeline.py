"""Watching leaders and ISRs change while a lesson breaks things, and plotting what happened.

    with ins.isr_timeline(cluster, "demo") as tl:
        tl.mark("kill broker-3")
        cluster.kill("broker-3")
        ...
    tl.plot()

A background thread asks the metadata every ``interval`` seconds (its own
AdminClient: confluent-kafka clients are thread-safe, but a separate one keeps
the lesson's calls from queueing behind the sampler).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab._timeouts import PROBE
from eoslab.cluster import Admin

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster


@dataclass
class IsrTimeline:
    cluster: Cluster
    topic: str
    interval: float = 0.25
    samples: list[dict[str, Any]] = field(default_factory=list)
    events: list[tuple[float, str]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _t0: float = 0.0

    def __enter__(self) -> IsrTimeline:
        self._t0 = time.monotonic()
        admin = Admin(self.cluster.topology, self.cluster.bootstrap_servers())
        self._thread = threading.Thread(target=self._run, args=(admin,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        time.sleep(self.interval * 2)  # one more sample of the final state
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _run(self, admin: Admin) -> None:
        while not self._stop.is_set():
            t = time.monotonic() - self._t0
            try:
                for p in admin.partitions(self.topic, timeout=PROBE):
                    self.samples.append(
                        {
                            "t": round(t, 2),
                            "partition": p.partition,
                            "leader": p.leader,
                            "isr": ",".join(map(str, sorted(p.isr))),
                            "isr_size": len(p.isr),
                        }
                    )
            except Exception:  # noqa: BLE001 - a sample lost while a broker dies is not an error
                pass
            self._stop.wait(self.interval)

    def mark(self, label: str) -> None:
        """Note an event (``"kill broker-3"``) at the current time: it becomes a line on the plot."""
        self.events.append((round(time.monotonic() - self._t0, 2), label))

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.samples)

    def changes(self) -> pd.DataFrame:
        """Only the samples where a partition's leader or ISR changed: the story in a few rows."""
        df = self.frame()
        if df.empty:
            return df
        df = df.sort_values(["partition", "t"])
        changed = (df[["leader", "isr"]] != df.groupby("partition")[["leader", "isr"]].shift()).any(axis=1)
        return df[changed].sort_values("t").reset_index(drop=True)

    def plot(self, ax: Any = None) -> Any:
        import matplotlib.pyplot as plt

        df = self.frame()
        if ax is None:
            _, ax = plt.subplots(figsize=(9, 3.2))
        for i, (part, rows) in enumerate(df.groupby("partition")):
            # a small offset per partition keeps equal lines apart
            ax.step(rows["t"], rows["isr_size"] + 0.04 * i, where="post", label=f"{self.topic}-{part} ISR size")
        for t, label in self.events:
            ax.axvline(t, color="grey", linestyle="--", linewidth=0.8)
            ax.annotate(label, (t, 3.15), rotation=0, fontsize=8, ha="left", va="bottom")
        ax.set_ylim(0, 3.6)
        ax.set_yticks([0, 1, 2, 3])
        ax.axhline(2, color="red", linewidth=0.6, linestyle=":")
        ax.text(0, 2.05, "min.insync.replicas", color="red", fontsize=7)
        ax.set_xlabel("seconds")
        ax.legend(loc="lower right", fontsize=8)
        ax.figure.tight_layout()
        return ax


def isr_timeline(cluster: Cluster, topic: str, interval: float = 0.25) -> IsrTimeline:
    """A context manager that samples the leaders and ISRs of ``topic`` every ``interval`` seconds."""
    return IsrTimeline(cluster, topic, interval)
