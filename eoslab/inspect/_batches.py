"""The batches of one partition as a chosen replica holds them on disk.

Why on disk and on a chosen replica: module 01 shows that the batch header
(producer id, epoch, base sequence; KIP-98) is written once by the leader and
copied byte for byte by the followers, and module 04 shows aborted data that
stays on disk although a ``read_committed`` consumer never sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eoslab.errors import PartitionFolderMissing
from eoslab.inspect._dumplog import Batch
from eoslab.inspect._dumptool import dump, dump_per_node, list_folder, log_files_by_leader
from eoslab.inspect._table import Rows

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster
    from eoslab.topology import Node


def broker_node(cluster: Cluster, broker: int | str | None, topic: str, partition: int) -> Node:
    """``broker`` as a node: a node id, a name, or ``None`` for the partition's current leader."""
    if broker is None:
        return cluster.topology.broker(cluster.leader(topic, partition))
    if isinstance(broker, str):
        return cluster.topology.node(broker)
    return cluster.topology.broker(broker)


def partition_files(
    cluster: Cluster, topic: str, partition: int, broker: int | str | None = None, suffix: str = ".log"
) -> tuple[Node, str, list[str]]:
    """(broker node, folder, file names ending in ``suffix``) of ``topic-partition`` on a replica.

    ``broker`` is a node id or name; ``None`` = the partition's current leader.
    """
    node = broker_node(cluster, broker, topic, partition)
    folder = f"{topic}-{partition}"
    names = list_folder(cluster, node, folder)
    if names is None:
        raise PartitionFolderMissing(_why_missing(cluster, node, topic, partition))
    return node, folder, [n for n in names if n.endswith(suffix)]


def _why_missing(cluster: Cluster, node: Node, topic: str, partition: int) -> str:
    where = f"{cluster.backend.data_path(node)}/{topic}-{partition}"
    try:
        parts = cluster.partitions(topic)
    except Exception:  # noqa: BLE001 - the topic itself is unknown
        return (
            f"Partition {topic}-{partition} has no folder on {node.name} ({where}) and the cluster does not "
            f"know topic {topic!r}: check the name with cluster.partitions()."
        )
    mine = [p for p in parts if p.partition == partition]
    if not mine:
        return (
            f"Partition {topic}-{partition} has no folder on {node.name} ({topic} has {len(parts)} "
            f"partition(s), numbered from 0): {where}."
        )
    return (
        f"Partition {topic}-{partition} has no folder on {node.name} ({where}): its replicas are "
        f"{list(mine[0].replicas)}; ask one of those brokers."
    )


def batches(
    cluster: Cluster,
    topic: str,
    partition: int,
    broker: int | str | None = None,
    *,
    records: bool = False,
    data: bool = False,
) -> Rows[Batch]:
    """Every batch of ``topic-partition`` on one replica, all segments in one DumpLogSegments call.

    ``records=True`` keeps each record (offset, sequence, header keys);
    ``data=True`` adds keys and values (``--print-data-log``). Control batches
    always carry their marker (COMMIT/ABORT) and coordinator epoch.
    """
    node, folder, names = partition_files(cluster, topic, partition, broker)
    flags = ["--deep-iteration"]
    if data:
        flags.append("--print-data-log")
    found: list[Batch] = []
    for f in dump(cluster, node, folder, names, *flags):
        found.extend(f.batches)
    if not (records or data):
        from dataclasses import replace

        found = [replace(b, records=()) for b in found]
    found.sort(key=lambda b: b.base_offset)
    return Rows(found, Batch)


def batches_of(
    cluster: Cluster, partitions: list[tuple[str, int]], *, records: bool = False
) -> dict[tuple[str, int], list[Batch]]:
    """The batches of several partitions, each on its current leader: ONE DumpLogSegments call per broker
    (the calls run at the same time).

    E.g. the two data partitions of a transaction and the ``__consumer_offsets``
    partition of its group. No ``--print-data-log`` (an internal topic's records
    are binary): read values with a consumer, or :func:`batches` with ``data=True``.
    """
    from dataclasses import replace

    wanted = list(dict.fromkeys(partitions))
    leaders = {(p.topic, p.partition): p.leader for t in {t for t, _ in wanted} for p in cluster.partitions(t)}
    by_broker = log_files_by_leader(cluster, wanted, leaders)
    out: dict[tuple[str, int], list[Batch]] = {tp: [] for tp in wanted}
    dumped = dump_per_node(cluster, by_broker, "--deep-iteration")  # the brokers' JVMs run side by side
    for broker, files in by_broker.items():
        for (folder, _), f in zip(files, dumped[broker], strict=True):
            topic, _, number = folder.rpartition("-")
            found = f.batches if records else [replace(b, records=()) for b in f.batches]
            out[(topic, int(number))].extend(found)
    for tp in out:
        out[tp].sort(key=lambda b: b.base_offset)
    return out


def records_frame(batch_list: list[Batch]) -> pd.DataFrame:
    """One row per record, with its batch's producer id, epoch and flags: the view of module 04."""
    from eoslab.inspect._table import frame

    rows = []
    for b in batch_list:
        for r in b.records:
            rows.append(
                {
                    "offset": r.offset,
                    "producer_id": b.producer_id,
                    "producer_epoch": b.producer_epoch,
                    "sequence": r.sequence,
                    "is_transactional": b.is_transactional,
                    "is_control": b.is_control,
                    "marker": r.marker,
                    "key": r.key,
                    "value": r.value,
                    "header_keys": r.header_keys,
                    "timestamp": r.timestamp,
                }
            )
    return frame(
        rows,
        [
            "offset",
            "producer_id",
            "producer_epoch",
            "sequence",
            "is_transactional",
            "is_control",
            "marker",
            "key",
            "value",
            "header_keys",
            "timestamp",
        ],
    )
