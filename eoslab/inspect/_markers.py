"""Transaction markers and the abort index, as a partition's replica holds them on disk.

When a transaction ends, its coordinator asks the leader of every partition the
transaction touched to append a **control batch** (KIP-98): one record, a
COMMIT or ABORT marker, with the producer's id and epoch in the batch header
and the coordinator's epoch in the record. The request that carries it,
WriteTxnMarkers, goes broker to broker: no client proxy sees it, so the disk is
where a lesson sees it. The batch's timestamp is the partition leader's clock
(milliseconds) when it appended the marker.

An ABORT marker also adds an entry to the segment's ``.txnindex`` (first and
last offset of the aborted transaction, and the LSO then). A ``read_committed``
Fetch answer lists the aborted transactions in range from it, with producer id
and first offset only (``FetchResponse.json``): the consumer drops those
producers' batches from there to their ABORT markers.

Everything here is general (any topic, partition, replica, producer) so the
modules on ``read_committed`` and exactly-once pipelines read the same objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eoslab.inspect._batches import batches_of, partition_files
from eoslab.inspect._dumplog import AbortedTxn, Batch
from eoslab.inspect._dumptool import dump
from eoslab.inspect._table import Rows

if TYPE_CHECKING:
    from eoslab.cluster import Cluster


@dataclass(frozen=True)
class Marker:
    """One transaction marker (a control batch) in a partition's log.

    ``timestamp`` is when the partition leader appended it (its clock, ms);
    ``coordinator_epoch`` is the epoch of the transaction coordinator that
    asked for it (it grows when ``__transaction_state``'s partition changes
    leader, so a deposed coordinator's late markers are refused).
    """

    topic: str
    partition: int
    broker: int
    offset: int
    marker: str  # COMMIT or ABORT
    coordinator_epoch: int
    producer_id: int
    producer_epoch: int
    timestamp: int
    partition_leader_epoch: int


def markers_from(
    batches: Iterable[Batch], topic: str, partition: int, broker: int, producer_ids: Iterable[int] | None = None
) -> list[Marker]:
    """The control batches among ``batches`` (of one replica), as :class:`Marker` rows, oldest first."""
    keep = None if producer_ids is None else set(producer_ids)
    out = [
        Marker(
            topic=topic,
            partition=partition,
            broker=broker,
            offset=b.base_offset,
            marker=b.marker or "?",
            coordinator_epoch=-1 if b.coordinator_epoch is None else b.coordinator_epoch,
            producer_id=b.producer_id,
            producer_epoch=b.producer_epoch,
            timestamp=b.timestamp,
            partition_leader_epoch=b.partition_leader_epoch,
        )
        for b in batches
        if b.is_control and b.marker is not None and (keep is None or b.producer_id in keep)
    ]
    return sorted(out, key=lambda m: m.offset)


def markers(
    cluster: Cluster,
    topic: str,
    partition: int,
    broker: int | str | None = None,
    *,
    producer_ids: Iterable[int] | None = None,
) -> Rows[Marker]:
    """The COMMIT/ABORT markers of ``topic-partition`` on one replica (its leader by default): one JVM call."""
    node, folder, names = partition_files(cluster, topic, partition, broker)
    found = [b for f in dump(cluster, node, folder, names, "--deep-iteration") for b in f.batches]
    return Rows(markers_from(found, topic, partition, node.node_id, producer_ids), Marker)


def markers_of(
    cluster: Cluster, partitions: Iterable[tuple[str, int]], *, producer_ids: Iterable[int] | None = None
) -> Rows[Marker]:
    """Markers of several partitions, each read on its current leader: ONE DumpLogSegments call per broker.

    E.g. the two data partitions of a transaction and the ``__consumer_offsets``
    partition of its consumer group, which all get a marker for the same end.
    """
    keep = None if producer_ids is None else list(producer_ids)
    leaders = {}
    rows: list[Marker] = []
    wanted = list(dict.fromkeys(partitions))
    for t in {t for t, _ in wanted}:
        leaders.update({(p.topic, p.partition): p.leader for p in cluster.partitions(t)})
    for (topic, part), found in batches_of(cluster, wanted, records=True).items():
        rows += markers_from(found, topic, part, leaders[(topic, part)], keep)
    rows.sort(key=lambda m: (m.topic, m.partition, m.offset))
    return Rows(rows, Marker)


def txn_index(cluster: Cluster, topic: str, partition: int, broker: int | str | None = None) -> Rows[AbortedTxn]:
    """The ``.txnindex`` entries (aborted transactions) of every segment of ``topic-partition`` on one replica.

    A segment gets its ``.txnindex`` file with its first ABORT marker; a partition
    that never saw an abort has none (an empty result, not an error).
    """
    node, folder, names = partition_files(cluster, topic, partition, broker, suffix=".txnindex")
    entries: list[AbortedTxn] = []
    if names:
        for f in dump(cluster, node, folder, sorted(names)):
            entries.extend(f.aborted)
    return Rows(entries, AbortedTxn)
