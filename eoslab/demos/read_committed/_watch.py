"""HW and LSO over time while a transaction stays open on partition A, and a read_committed consumer's lag.

Plain records flow into A and B all along; for a few seconds one transaction is open on A.
Every sample asks ListOffsets (``latest`` under read_uncommitted = HW, under read_committed =
LSO) and the consumer's position; its lag is measured at the LSO, the end it can reach.
The open transaction holds A's LSO where the transaction began; B's LSO follows its HW.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab.demos._clients import TxnProducer, consumer, run_id, transactional_producer
from eoslab.demos.read_committed._log import LOG_PRODUCER, _plain_producer

if TYPE_CHECKING:
    import pandas as pd
    from confluent_kafka import Consumer

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
    writer = _plain_flow(cluster, topic, stop)
    t = transactional_producer(cluster, f"rc-watch-{run}", f"rc-watch-{run}", proxied=False, conf=LOG_PRODUCER)
    t.init_transactions(30)
    txn = _OpenOnA(t, topic, before, open_for)
    c = consumer(cluster, f"rc-watch-{run}", isolation="read_committed", conf={"fetch.wait.max.ms": 100})
    c.assign([TopicPartition(topic, p, ins.partition_offsets(cluster, topic, p).high_watermark) for p in (0, 1)])
    handle = _display() if live else None
    start = time.monotonic()
    writer.start()
    last_draw = 0.0
    try:
        while (now := time.monotonic() - start) < before + open_for + after:
            txn.step(w, now, start)
            c.consume(500, 0.05)
            w.samples.extend(_samples(cluster, topic, c, start))
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


def _plain_flow(cluster: Cluster, topic: str, stop: threading.Event) -> threading.Thread:
    """A thread (not started) that writes a plain record into A and B every 0.2 s until ``stop`` is set."""
    plain = _plain_producer(cluster, proxied=False)

    def plain_writer() -> None:
        while not stop.is_set():
            for part in (0, 1):
                plain.produce(topic, b"plain", partition=part)
            plain.poll(0)
            time.sleep(0.2)
        plain.flush(10)

    return threading.Thread(target=plain_writer, daemon=True)


@dataclass
class _OpenOnA:
    """The scenario's transaction: begun at ``before`` s, a record into A at every sample while open,
    committed at ``before + open_for`` s; it stamps the watch with when it opened and committed."""

    producer: TxnProducer
    topic: str
    before: float
    open_for: float
    phase: str = "before"

    def step(self, w: Watch, now: float, start: float) -> None:
        if self.phase == "before" and now >= self.before:
            self.producer.begin_transaction()
            w.opened_at, self.phase = now, "open"
        if self.phase == "open":
            self.producer.produce(self.topic, b"txn", partition=0)
            self.producer.poll(0)
            if now >= self.before + self.open_for:
                self.producer.commit_transaction(30)
                w.committed_at, self.phase = time.monotonic() - start, "after"


def _samples(cluster: Cluster, topic: str, c: Consumer, start: float) -> list[dict[str, Any]]:
    """One sample per partition: its HW and LSO (ListOffsets), the consumer's position and lag at each."""
    from confluent_kafka import TopicPartition

    positions = {tp.partition: tp.offset for tp in c.position([TopicPartition(topic, p) for p in (0, 1)])}
    rows = []
    for o in ins.offsets(cluster, topic, [0, 1]):
        pos = positions.get(o.partition, -1)
        rows.append(
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
    return rows


def _display() -> Any:
    from IPython.display import display

    show: Callable[..., Any] = display  # IPython's display is untyped
    return show(display_id=True)


def _redraw(handle: Any, w: Watch) -> None:
    import matplotlib.pyplot as plt

    if not w.samples:
        return
    ax = plot_watch(w)
    fig = ax[0].figure
    handle.update(fig)
    plt.close(fig)
