"""librdkafka's statistics (``statistics.interval.ms``), cut to what says where a producer's time goes.

Field names are librdkafka's own (its STATISTICS.md): per broker ``wakeups`` ("Broker thread poll loop
wakeups", one per pass of ``rd_kafka_broker_ops_io_serve``), ``waitresp_cnt``/``waitresp_msg_cnt`` (requests
and messages sent and awaiting an answer), ``outbuf_cnt`` (requests queued, not yet sent), ``rtt``
(µs, over the last interval), ``req.Produce``; per partition ``msgs_inflight`` and ``xmit_msgq_cnt``; per
topic ``batchcnt`` (messages per batch); top-level ``txmsgs`` (messages sent to the brokers).

:func:`snapshot` reads one JSON document, :func:`over` a window of them: counters as the difference
between the window's first and last document, gauges as their mean over the window. Pure, so tested on
made-up documents.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Snapshot:
    ts_us: int  # the document's own ``ts`` (librdkafka's monotonic clock, µs)
    txmsgs: int
    wakeups: int  # summed over every broker thread
    produce_requests: int  # ``req.Produce`` summed over the brokers
    waitresp_cnt: int  # summed over the brokers: Produce (and other) requests in flight
    waitresp_msg_cnt: int
    outbuf_cnt: int
    msgs_inflight: int  # summed over the partitions
    xmit_msgq_cnt: int
    rtt_p50_ms: float  # the brokers' median ``rtt.p50``, ms (brokers that answered in the interval)
    rtt_p99_ms: float
    batch_msgs: float  # ``topics.*.batchcnt.avg``: messages per batch, mean over topics with batches


def _brokers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(doc.get("brokers", {}).values())


def _rtts(brokers: list[dict[str, Any]], key: str) -> float:
    vals = [b["rtt"][key] / 1000 for b in brokers if b.get("nodeid", -1) >= 0 and b.get("rtt", {}).get("cnt", 0)]
    return statistics.median(vals) if vals else math.nan


def _partitions(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        p
        for t in doc.get("topics", {}).values()
        for p in t.get("partitions", {}).values()
        if p.get("partition", -1) >= 0
    ]


def snapshot(doc: dict[str, Any] | str) -> Snapshot:
    """One statistics document (as JSON text or parsed)."""
    d: dict[str, Any] = json.loads(doc) if isinstance(doc, str) else doc
    brokers, parts = _brokers(d), _partitions(d)
    batches = [t["batchcnt"]["avg"] for t in d.get("topics", {}).values() if t.get("batchcnt", {}).get("cnt", 0)]
    return Snapshot(
        ts_us=int(d.get("ts", 0)),
        txmsgs=int(d.get("txmsgs", 0)),
        wakeups=sum(int(b.get("wakeups", 0)) for b in brokers),
        produce_requests=sum(int(b.get("req", {}).get("Produce", 0)) for b in brokers),
        waitresp_cnt=sum(int(b.get("waitresp_cnt", 0)) for b in brokers),
        waitresp_msg_cnt=sum(int(b.get("waitresp_msg_cnt", 0)) for b in brokers),
        outbuf_cnt=sum(int(b.get("outbuf_cnt", 0)) for b in brokers),
        msgs_inflight=sum(int(p.get("msgs_inflight", 0)) for p in parts),
        xmit_msgq_cnt=sum(int(p.get("xmit_msgq_cnt", 0)) for p in parts),
        rtt_p50_ms=_rtts(brokers, "p50"),
        rtt_p99_ms=_rtts(brokers, "p99"),
        batch_msgs=statistics.mean(batches) if batches else math.nan,
    )


@dataclass(frozen=True)
class Window:
    """The statistics over a window: per record sent (``txmsgs``), per second, and mean gauges."""

    documents: int
    txmsgs: int
    seconds: float
    wakeups_per_record: float
    wakeups_per_s: float
    produce_per_s: float
    waitresp_cnt: float
    waitresp_msg_cnt: float
    outbuf_cnt: float
    msgs_inflight: float
    xmit_msgq_cnt: float
    rtt_p50_ms: float
    rtt_p99_ms: float
    batch_msgs: float


def _mean(vals: list[float]) -> float:
    vals = [v for v in vals if not math.isnan(v)]
    return statistics.mean(vals) if vals else math.nan


GAUGES = (
    "waitresp_cnt",
    "waitresp_msg_cnt",
    "outbuf_cnt",
    "msgs_inflight",
    "xmit_msgq_cnt",
    "rtt_p50_ms",
    "rtt_p99_ms",
    "batch_msgs",
)
"""The fields a window averages over its documents (the others are counters, differenced)."""


def _per(amount: float, unit: float) -> float:
    """``amount / unit``, NaN when there is no unit to divide by (no record sent, no time passed)."""
    return amount / unit if unit > 0 else math.nan


def over(snaps: list[Snapshot]) -> Window | None:
    """The window from the first to the last document; None with fewer than two."""
    if len(snaps) < 2:
        return None
    a, b = snaps[0], snaps[-1]
    sent, secs = b.txmsgs - a.txmsgs, (b.ts_us - a.ts_us) / 1e6
    wake = b.wakeups - a.wakeups
    inner = snaps[1:]  # the gauges as they were during the window, not at its start
    return Window(
        documents=len(snaps),
        txmsgs=sent,
        seconds=secs,
        wakeups_per_record=_per(wake, sent),
        wakeups_per_s=_per(wake, secs),
        produce_per_s=_per(b.produce_requests - a.produce_requests, secs),
        **{g: _mean([getattr(s, g) for s in inner]) for g in GAUGES},
    )
