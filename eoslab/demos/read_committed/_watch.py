"""HW and LSO over time while a transaction stays open on partition A, and a read_committed consumer's lag.

Plain records flow into A and B all along; for a few seconds one transaction is open on A.
Every sample asks ListOffsets (``latest`` under read_uncommitted = HW, under read_committed =
LSO) and the consumer's position; its lag is measured at the LSO, the end it can reach.
The open transaction holds A's LSO where the transaction began; B's LSO follows its HW.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab.demos.read_committed._log import LOG_PRODUCER, _plain_producer
from eoslab.demos.transactions import consumer, run_id, transactional_producer

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

SAMPLE_S = 0.25


@dataclass
class Watch:
    samples: list[dict[str, Any]] = field(default_factory=list)
    opened_at: float = 0.0
    committed_at: float = 0.0

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.samples)


def plot_watch(w: Watch, ax: Any = None) -> Any:
    """Two panels (A, B): HW, LSO and the read_committed consumer's position over time."""
    import matplotlib.pyplot as plt

    df = w.frame()
    if ax is None:
        _, ax = plt.subplots(1, 2, figsize=(11, 3.4), sharey=False)
    for i, part in enumerate((0, 1)):
        d = df[df["partition"] == part]
        a = ax[i]
        a.plot(d["t"], d["high_watermark"], label="high watermark (read_uncommitted end)", color="#1f77b4")
        a.plot(d["t"], d["last_stable"], label="last stable offset (read_committed end)", color="#d62728")
        a.plot(d["t"], d["position"], "--", label="read_committed consumer position", color="#2ca02c")
        if part == 0 and w.committed_at:
            a.axvspan(w.opened_at, w.committed_at, color="#fff59d", alpha=0.6, label="transaction open on A")
        a.set_title(f"partition {'AB'[part]}")
        a.set_xlabel("seconds")
        a.set_ylabel("offset")
    ax[0].legend(fontsize=7, loc="upper left")
    return ax


def watch_lso(
    cluster: Cluster, topic: str, *, before: float = 1.0, open_for: float = 4.0, after: float = 1.5, live: bool = True
) -> Watch:
    """Run the scenario (``before`` + ``open_for`` + ``after`` seconds), sampling every 0.25 s; draw live."""
    from confluent_kafka import TopicPartition

    run = run_id()
    w = Watch()
    stop = threading.Event()
    plain = _plain_producer(cluster, proxied=False)

    def plain_writer() -> None:
        while not stop.is_set():
            for part in (0, 1):
                plain.produce(topic, b"plain", partition=part)
            plain.poll(0)
            time.sleep(0.2)
        plain.flush(10)

    t = transactional_producer(cluster, f"rc-watch-{run}", f"rc-watch-{run}", proxied=False, conf=LOG_PRODUCER)
    t.init_transactions(30)
    c = consumer(cluster, f"rc-watch-{run}", isolation="read_committed", conf={"fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, p, ins.partition_offsets(cluster, topic, p).high_watermark) for p in (0, 1)])
    writer = threading.Thread(target=plain_writer, daemon=True)
    handle = _display() if live else None
    start = time.monotonic()
    writer.start()
    phase = "before"
    last_draw = 0.0
    try:
        while (now := time.monotonic() - start) < before + open_for + after:
            if phase == "before" and now >= before:
                t.begin_transaction()
                w.opened_at, phase = now, "open"
            if phase == "open":
                t.produce(topic, b"txn", partition=0)
                t.poll(0)
                if now >= before + open_for:
                    t.commit_transaction(30)
                    w.committed_at, phase = time.monotonic() - start, "after"
            c.consume(500, 0.05)
            positions = {tp.partition: tp.offset for tp in c.position([TopicPartition(topic, p) for p in (0, 1)])}
            for o in ins.offsets(cluster, topic, [0, 1]):
                pos = positions.get(o.partition, -1)
                w.samples.append(
                    {
                        "t": round(time.monotonic() - start, 3),
                        "partition": o.partition,
                        "high_watermark": o.high_watermark,
                        "last_stable": o.last_stable,
                        "position": pos if pos >= 0 else None,
                        "lag_at_lso": o.last_stable - pos if pos >= 0 else None,
                        "lag_at_hw": o.high_watermark - pos if pos >= 0 else None,
                    }
                )
            if handle is not None and now - last_draw > 1.0:
                _redraw(handle, w)
                last_draw = now
            time.sleep(SAMPLE_S)
    finally:
        stop.set()
        writer.join(10)
        c.close()
    if handle is not None:
        _redraw(handle, w)
    return w


def _display() -> Any:
    from IPython.display import display

    return display(display_id=True)


def _redraw(handle: Any, w: Watch) -> None:
    import matplotlib.pyplot as plt

    if not w.samples:
        return
    ax = plot_watch(w)
    fig = ax[0].figure
    handle.update(fig)
    plt.close(fig)
