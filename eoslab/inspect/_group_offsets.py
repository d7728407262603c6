"""A consumer group's offsets on a transactional topic: what is committed, what is pending, what is left.

Two facts make the usual lag (high watermark minus committed offset) wrong on a transactional topic:

- **markers and aborted records take offsets.** Every commit or abort writes a control record (a marker) into
  each partition the transaction wrote, and an aborted transaction's records stay in the log; a
  ``read_committed`` consumer never receives either. A consumer that has read everything and committed the
  last record's offset + 1 still shows a lag of the markers and aborted records after it
  (:attr:`GroupPartition.offsets_behind`), while nothing is left to read (:attr:`GroupPartition.records_left`,
  counted by reading). librdkafka's ``consumer_lag`` statistic measures against the LSO under
  ``read_committed`` (STATISTICS.md); a group's committed offset is still the application's choice.
- **offsets sent in a transaction are pending until its markers land.** ``send_offsets_to_transaction`` writes
  them to ``__consumer_offsets`` inside the transaction; the group coordinator answers an OffsetFetch that asks
  for stable offsets (``require_stable``, KIP-447; librdkafka's consumer asks so) with UNSTABLE_OFFSET_COMMIT
  (88) until then, and one that does not with the last offset committed before
  (:attr:`GroupPartition.pending`; Kafka's ``GroupMetadataManager``/``OffsetMetadataManager``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab.errors import ClusterError
from eoslab.inspect._offsets import LIST_OFFSETS, offsets
from eoslab.inspect._table import Rows

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

UNSTABLE_OFFSET_COMMIT = 88
"""Kafka's error code for "there are unstable offsets that need to be cleared" (Errors.java)."""
READ_LEFT = 30.0
"""Reading what is left of a partition from its committed offset to the LSO: a few thousand records, a
second; the rest is room for a leader that is being elected."""


@dataclass(frozen=True)
class GroupPartition:
    """One partition of a group's topic. ``committed`` is the stable committed offset (``None``: none yet);
    ``pending`` says a transaction holds offsets for it that are not yet stable (its markers not yet written)."""

    group: str
    topic: str
    partition: int
    committed: int | None
    pending: bool
    high_watermark: int
    last_stable: int
    records_left: int

    @property
    def offsets_behind(self) -> int:
        """The usual lag: high watermark minus the committed offset (the log's start when none)."""
        return self.high_watermark - (self.committed or 0)

    FRAME_EXTRAS = ("offsets_behind",)


def group_rows(
    group: str,
    topic: str,
    committed: dict[int, int],
    unstable: set[int],
    ends: dict[int, tuple[int, int]],
    left: dict[int, int],
) -> Rows[GroupPartition]:
    """The rows from what the cluster answered: ``committed`` (partition -> the stable committed offset: the
    RequireStable answer, or where it was UNSTABLE the answer without it; negative: none), ``unstable``
    (partitions answered UNSTABLE_OFFSET_COMMIT with RequireStable), ``ends`` (partition -> (high watermark,
    LSO)) and ``left`` (partition -> read_committed records read from the committed offset to the LSO)."""
    rows = [
        GroupPartition(group, topic, p, committed[p] if committed.get(p, -1) >= 0 else None, p in unstable,
                       hw, lso, left.get(p, 0))
        for p, (hw, lso) in sorted(ends.items())
    ]  # fmt: skip
    return Rows(rows, GroupPartition)


def _fetch(cluster: Cluster, group: str, topic: str, parts: list[int], stable: bool) -> dict[int, Any]:
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition

    req = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in parts])]
    try:
        fut = cluster.admin.client.list_consumer_group_offsets(req, require_stable=stable)[group]
        return {tp.partition: tp for tp in fut.result(timeout=LIST_OFFSETS).topic_partitions or []}
    except KafkaException as e:
        raise ClusterError(f"OffsetFetch of group {group!r} failed: {e.args[0].str()}. Is the cluster up?") from None


def _count_left(cluster: Cluster, topic: str, start: dict[int, int]) -> dict[int, int]:
    """Records a read_committed consumer receives from ``start`` (partition -> offset) to each partition's end."""
    import uuid

    from confluent_kafka import KafkaError, TopicPartition

    from eoslab._wait import wait_until
    from eoslab.clients import consumer

    c = consumer(cluster, f"eoslab-left-{uuid.uuid4().hex[:8]}", isolation="read_committed",
                 **{"enable.partition.eof": True})  # fmt: skip
    left = {p: 0 for p in start}
    todo = set(start)
    try:
        c.assign([TopicPartition(topic, p, o) for p, o in start.items()])

        def done() -> bool:
            for m in c.consume(500, timeout=0.5):
                err = m.error()
                if err is None:
                    left[int(m.partition() or 0)] += 1
                elif err.code() == KafkaError._PARTITION_EOF:
                    todo.discard(int(m.partition() or 0))
            return not todo

        wait_until(done, timeout=READ_LEFT, what=f"a read_committed read of {topic} to its LSO", interval=0.0)
    finally:
        c.close()
    return left


def group_offsets(cluster: Cluster, group: str, topic: str) -> Rows[GroupPartition]:
    """Each partition of ``topic`` for ``group``: its stable committed offset, whether offsets are pending in
    an open transaction, the high watermark and LSO, the usual lag (``offsets_behind``) and the records a
    ``read_committed`` consumer would still receive (``records_left``, counted by reading from the committed
    offset to the LSO)."""
    ends = {o.partition: (o.high_watermark, o.last_stable) for o in offsets(cluster, topic)}
    parts = sorted(ends)
    # RequireStable first: a partition it answers is settled, and its offset is the committed one. Only where it
    # answers UNSTABLE_OFFSET_COMMIT is the last stable offset asked without it (asked the other way round, the
    # markers could land between the two answers, and the plain answer would be the one from before them).
    stable = _fetch(cluster, group, topic, parts, stable=True)
    unstable = {p for p, tp in stable.items() if tp.error is not None and tp.error.code() == UNSTABLE_OFFSET_COMMIT}
    plain = _fetch(cluster, group, topic, sorted(unstable), stable=False) if unstable else {}
    committed = {p: (plain[p] if p in plain else tp).offset for p, tp in stable.items()}
    start = {p: max(committed.get(p, -1), 0) for p in parts if max(committed.get(p, -1), 0) < ends[p][1]}
    left = _count_left(cluster, topic, start) if start else {}
    return group_rows(group, topic, committed, unstable, ends, left)
