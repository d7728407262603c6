"""The flows of module 01 (the idempotent producer), shared by the notebook, its lab and the checks.

Every producer here goes through the fault proxy (so the trace sees it) with
the demo profile (a lost ack turns into a retry within seconds, see
:mod:`eoslab.faults._profile`), and has a ``client.id`` unique to the run, so
a notebook can be run again on the same cluster without mixing its evidence
with the last run's. The observed producer, one record's send and the table of a partition's batches are the
lesson clients' (``eoslab.demos``: notebook 02 uses them too); they are named here as well, so the notebook and
the lab call them as ``demo.producer``, ``demo.send``, ``demo.batches``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._timeouts import CLIENT_CALL, REQUEST
from eoslab._wait import wait_until
from eoslab.demos import Delivery as Delivery  # the lesson clients', named here for the notebook and the lab
from eoslab.demos import batches as batches
from eoslab.demos import producer as producer
from eoslab.demos import run_id as run_id  # notebook 01's demo.run_id(): the lessons' one
from eoslab.demos import send as send

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

STATS_WAIT = 3.0
"""One fresh librdkafka statistics report: an observed producer emits one every 100 ms (STATS_INTERVAL_MS)."""


def wait_for_pid(p: ins.ObservedProducer, timeout: float = CLIENT_CALL) -> ins.ClientEos:
    """Until librdkafka says it holds a producer id (idemp_state "Assigned"); its id and epoch."""
    found = wait_until(
        lambda: e if (e := p.eos(timeout=STATS_WAIT)).producer_id >= 0 else None,
        timeout=timeout,
        what="the producer to acquire a producer id (InitProducerId)",
    )
    assert found is not None
    return found


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


def duplicate_sentence(frame: pd.DataFrame, value: str, told: Delivery) -> str:
    """Whether this run wrote ``value`` more than once, in words true on any run.

    The module opens on this duplicate, before the cure: the sentence says so only when the log
    shows it (``frame`` from :func:`batches`), with the offset the client was told beside the copies.
    """
    offsets = [int(o) for o in frame.loc[frame["value"] == value, "base_offset"]]
    told_at = f"the client was told offset {told.offset}" if told.ok else f"the client was told {told.error}"
    if len(offsets) >= 2:
        last = " (the last copy's)" if told.ok and told.offset == offsets[-1] else ""
        return (
            f"This run showed it: {len(offsets)} copies of one record, at offsets {offsets}; "
            f"{told_at}{last}, so nothing on the client's side looks wrong."
        )
    return (
        f"This run did not show it: {len(offsets)} cop{'y' if len(offsets) == 1 else 'ies'} of the record "
        f"(offsets {offsets}) and {told_at}: the acknowledgement was not lost, so nothing was resent; "
        "run the cell again."
    )


def high_watermark(cluster: Cluster, topic: str, partition: int) -> int:
    return ins.partition_offsets(cluster, topic, partition).high_watermark


EPOCH_BUMP: dict[str, Any] = {
    # The message gives up (2 s) long before its request would time out (60 s): a lost ack then
    # leaves the record's fate unknown, and librdkafka bumps its epoch instead of retrying (KIP-360).
    "message.timeout.ms": 2000,
    "socket.timeout.ms": 60000,
}
"""Settings under which a lost acknowledgement ends in a KIP-360 epoch bump (see :func:`bump_epoch`)."""


def bump_epoch(proxy: Any, p: Any, topic: str, partition: int, value: bytes | str) -> Delivery:
    """Produce ``value`` while the proxy drops its acknowledgement, with ``p`` made with :data:`EPOCH_BUMP`.

    The record reaches the log, but its message times out first: librdkafka reports
    ``_MSG_TIMED_OUT`` and its NEXT batch goes out with the same producer id, epoch + 1 and
    sequence 0. Observed on the real cluster (tests/integration/test_faults_replay.py).
    """
    with proxy.drop_response(api="Produce", client_id=p.client_id, partition=partition):
        return send(p, topic, partition, value)


def produce_requests(proxy: Any, client_id: str) -> pd.DataFrame:
    """The Produce requests of one client as the proxy saw them: identity of each batch and its fate."""
    cols = ["broker", "fate", "producer_id", "producer_epoch", "base_sequence", "base_offset", "error"]
    frame = proxy.trace(client_id=client_id, api="Produce").frame()
    return frame[[c for c in cols if c in frame.columns]]


# Where the producer fields sit in a v2 record-batch header (see eoslab.protocol's record codec):
# baseOffset 8 | batchLength 4 | partitionLeaderEpoch 4 | magic 1 | crc 4 | attributes 2 |
# lastOffsetDelta 4 | baseTimestamp 8 | maxTimestamp 8 | producerId 8 | producerEpoch 2 | baseSequence 4
PRODUCER_FIELDS = (("producerId", 43, 8), ("producerEpoch", 51, 2), ("baseSequence", 53, 4))


def header_bytes(cluster: Cluster, topic: str, partition: int, offsets: list[int]) -> pd.DataFrame:
    """The raw producer fields of the batches at ``offsets``, as the leader serves them (a Fetch).

    Every v2 batch carries them: 8 + 2 + 4 bytes, all ``ff`` (-1) without idempotence.
    """
    import pandas as pd

    from eoslab.protocol import KafkaConnection, parse_record_batches

    node = cluster.topology.broker(cluster.leader(topic, partition))
    rows = []
    with KafkaConnection(*node.direct_address(), client_id="eoslab-header-bytes", timeout=REQUEST) as conn:
        for offset in offsets:
            body = {
                "ReplicaId": -1,
                "MaxWaitMs": 0,
                "MinBytes": 0,
                "MaxBytes": 1 << 20,
                "IsolationLevel": 0,
                "Topics": [
                    {
                        "Topic": topic,
                        "Partitions": [{"Partition": partition, "FetchOffset": offset, "PartitionMaxBytes": 1 << 20}],
                    }
                ],
            }
            blob = conn.request("Fetch", 12, body)["Responses"][0]["Partitions"][0]["Records"] or b""
            header = next(h for h in parse_record_batches(blob) if h.base_offset <= offset <= h.last_offset)
            raw = blob[header.position : header.position + header.size]
            row: dict[str, Any] = {"base_offset": header.base_offset}
            for name, start, width in PRODUCER_FIELDS:
                row[f"{name} ({width} bytes)"] = raw[start : start + width].hex(" ")
            row["producer fields, bits"] = 8 * sum(width for _, _, width in PRODUCER_FIELDS)
            row["batch bytes"] = header.size
            rows.append(row)
    return pd.DataFrame(rows)
