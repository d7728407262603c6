"""Log start, high watermark and last stable offset of each partition, asked in-process.

ListOffsets answers all three (no JVM): earliest = log start offset;
latest with ``read_uncommitted`` = high watermark; latest with
``read_committed`` = last stable offset (KIP-98), the first offset of the
oldest open transaction, or the high watermark when none is open. The LSO
catches up only when the markers are written, and the coordinator writes
them AFTER EndTxn has answered the producer: poll, do not assert at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab.errors import ClusterError
from eoslab.inspect._table import Rows

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

LIST_OFFSETS = 10.0
"""One ListOffsets round (three per call: start, HW, LSO) through the AdminClient: milliseconds; 10 s
(twice REQUEST) covers a partition whose leader is being elected."""


@dataclass(frozen=True)
class PartitionOffsets:
    """Offsets of one partition. ``open_gap`` = HW - LSO: offsets a read_committed consumer must wait for."""

    topic: str
    partition: int
    log_start: int
    high_watermark: int
    last_stable: int

    @property
    def open_gap(self) -> int:
        return self.high_watermark - self.last_stable

    FRAME_EXTRAS = ("open_gap",)


# Errors of a partition whose leadership just moved: asked again (librdkafka does not flag them retriable
# in an AdminClient answer). LEADER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
# UNKNOWN_LEADER_EPOCH ("Leader epoch is newer than broker epoch", seen right after a heal's elections).
_TRANSIENT = frozenset({5, 6, 74, 75})


def _ask(client: Any, tps: list[Any], spec: Any, isolation: Any, timeout: float) -> dict[tuple[str, int], int]:
    """One ListOffsets per partition; a retriable answer (a leader elected a moment ago, whose epoch the
    client or the broker does not know yet: UNKNOWN_LEADER_EPOCH, FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER)
    is asked again until ``timeout``, after fresh metadata, as a client would. (Seen after a heal moved
    leaders back: the AdminClient kept the old leader epoch until its metadata was refreshed.)"""
    import time

    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout
    out: dict[tuple[str, int], int] = {}
    todo = list(tps)
    while todo:
        futures = client.list_offsets({tp: spec for tp in todo}, isolation_level=isolation, request_timeout=timeout)
        again = []
        for tp, fut in futures.items():
            try:
                out[(tp.topic, tp.partition)] = fut.result(timeout=timeout + 1).offset
            except KafkaException as exc:
                err = exc.args[0]
                if (err.retriable() or err.code() in _TRANSIENT) and time.monotonic() < deadline:
                    again.append(tp)
                    continue
                raise ClusterError(
                    f"ListOffsets for {tp.topic}-{tp.partition} failed: {err.str()}. "
                    "Check the topic exists and its leader is up (cluster.partitions())."
                ) from None
        todo = again
        if todo:
            time.sleep(0.2)
            for topic in {tp.topic for tp in todo}:  # a Metadata request refreshes the client's leader epochs
                try:
                    client.list_topics(topic=topic, timeout=timeout)
                except KafkaException:
                    pass
    return out


def offsets(
    cluster: Cluster, topic: str, partitions: list[int] | None = None, timeout: float = LIST_OFFSETS
) -> Rows[PartitionOffsets]:
    """Log start, HW and LSO of ``topic``'s partitions (all of them by default): three ListOffsets calls."""
    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    if partitions is None:
        partitions = [p.partition for p in cluster.partitions(topic)]
    tps = [TopicPartition(topic, p) for p in partitions]
    client = cluster.admin.client
    start = _ask(client, tps, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED, timeout)
    hw = _ask(client, tps, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED, timeout)
    lso = _ask(client, tps, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED, timeout)
    rows = [PartitionOffsets(topic, p, start[(topic, p)], hw[(topic, p)], lso[(topic, p)]) for p in partitions]
    return Rows(rows, PartitionOffsets)


def partition_offsets(cluster: Cluster, topic: str, partition: int, timeout: float = LIST_OFFSETS) -> PartitionOffsets:
    return offsets(cluster, topic, [partition], timeout)[0]
