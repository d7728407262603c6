"""The flows of module 01 (the idempotent producer), shared by the notebook, its lab and the checks.

Every producer here goes through the fault proxy (so the trace sees it) with
the demo profile (a lost ack turns into a retry within seconds, see
:mod:`eoslab.faults._profile`), and has a ``client.id`` unique to the run, so
a notebook can be run again on the same cluster without mixing its evidence
with the last run's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._timeouts import CLIENT_CALL
from eoslab._wait import wait_until
from eoslab.faults import demo_producer_config

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

STATS_WAIT = 3.0
"""One fresh librdkafka statistics report: an observed producer emits one every 100 ms (STATS_INTERVAL_MS)."""
SEND_TIMEOUT = 60.0
"""One record's delivery report through the proxy, when a lesson drops its ack: the resend follows
socket.timeout.ms (3 s) and message.timeout.ms is 30 s, so a report comes well inside 60 s."""


@dataclass(frozen=True)
class Delivery:
    """What the client was told about one record: its offset, or the error."""

    topic: str
    partition: int
    offset: int
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def run_id() -> str:
    """A short id for this run of a notebook: client ids and topics get it as a suffix."""
    return uuid.uuid4().hex[:6]


def producer(
    cluster: Cluster, client_id: str, *, idempotent: bool = True, debug: str = "eos", **conf: Any
) -> ins.ObservedProducer:
    """An observed librdkafka producer through the fault proxy, with the demo profile.

    librdkafka's own log lines (its ``eos`` debug lines, and notices such as "Timed out
    ProduceRequest in flight") are kept in ``producer.log`` (``.grep(text)``) instead of
    landing in the notebook as stderr.
    """
    settings = demo_producer_config(cluster.bootstrap_servers(proxied=True), client_id, **conf)
    settings["enable.idempotence"] = idempotent
    if not idempotent:
        settings.setdefault("retries", 5)  # librdkafka retries by default too: say so, the duplicate needs it
    p = ins.ObservedProducer(settings, debug=debug)
    p.client_id = client_id  # type: ignore[attr-defined]
    return p


def wait_for_pid(p: ins.ObservedProducer, timeout: float = CLIENT_CALL) -> ins.ClientEos:
    """Until librdkafka says it holds a producer id (idemp_state "Assigned"); its id and epoch."""
    found = wait_until(
        lambda: e if (e := p.eos(timeout=STATS_WAIT)).producer_id >= 0 else None,
        timeout=timeout,
        what="the producer to acquire a producer id (InitProducerId)",
    )
    assert found is not None
    return found


def send(
    p: Any, topic: str, partition: int, value: bytes | str, *, key: bytes | None = None, timeout: float = SEND_TIMEOUT
) -> Delivery:
    """Produce ONE record and wait for its delivery report (one record = one batch with linger.ms=0)."""
    reports: list[Delivery] = []

    def on_delivery(err: Any, msg: Any) -> None:
        reports.append(Delivery(msg.topic(), msg.partition(), msg.offset(), err.name() if err else None))

    data = value.encode() if isinstance(value, str) else value
    p.produce(topic, value=data, key=key, partition=partition, on_delivery=on_delivery)
    p.flush(timeout)
    wait_until(lambda: reports, timeout=timeout, what=f"the delivery report of a record to {topic}-{partition}")
    return reports[0]


def batches(
    cluster: Cluster,
    topic: str,
    partition: int,
    *,
    producer_ids: list[int] | None = None,
    broker: int | None = None,
    values: bool = True,
) -> pd.DataFrame:
    """Batch headers of one replica (the leader by default), as a table; only these producers' if given.

    ``values`` adds the first record's value, so a duplicate by content is visible.
    """
    import pandas as pd

    keep = [
        "base_offset",
        "last_offset",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "last_sequence",
        "is_transactional",
        "is_control",
        "size",
    ]
    rows = []
    for b in ins.batches(cluster, topic, partition, broker=broker, records=values, data=values):
        if producer_ids is not None and b.producer_id not in producer_ids:
            continue
        row = {k: getattr(b, k) for k in keep}
        if values:
            row["value"] = b.records[0].value if b.records else None
        rows.append(row)
    return pd.DataFrame(rows, columns=keep + (["value"] if values else []))


def on_every_replica(cluster: Cluster, topic: str, partition: int, producer_ids: list[int]) -> pd.DataFrame:
    """The same producers' batches as each live replica holds them: one row per (broker, batch)."""
    import pandas as pd

    frames = []
    for p in cluster.partitions(topic):
        if p.partition != partition:
            continue
        for b in p.isr:
            df = batches(cluster, topic, partition, producer_ids=producer_ids, broker=b, values=False)
            frames.append(df.assign(broker=b))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def high_watermark(cluster: Cluster, topic: str, partition: int) -> int:
    return ins.partition_offsets(cluster, topic, partition).high_watermark
