"""Producer state of a partition: what a replica remembers about each producer id.

Two views of the same state (KIP-98's per-partition producer state, KIP-360's
retention of it):

- live, from the broker's memory: DescribeProducers (KIP-664) through
  ``kafka-transactions.sh describe-producers``; with ``--broker-id`` any
  replica answers, not only the leader, so a lesson can compare them;
- on disk, the ``<offset>.snapshot`` files that a broker writes when a segment
  rolls and at a clean shutdown, and reloads at start instead of re-reading the
  whole log. DumpLogSegments (4.1 and 4.4) decodes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from eoslab.inspect._batches import partition_files
from eoslab.inspect._cli_table import opt_int, parse_tsv
from eoslab.inspect._dumplog import SnapshotEntry
from eoslab.inspect._dumptool import dump
from eoslab.inspect._table import Rows

if TYPE_CHECKING:
    from eoslab.cluster import Cluster


@dataclass(frozen=True)
class ProducerState:
    """One active producer of a partition, as one replica holds it in memory.

    ``current_txn_start_offset`` is the first offset of its open transaction:
    the last stable offset cannot pass it (``None`` = no open transaction).
    ``coordinator_epoch`` is the epoch of the transaction coordinator that
    wrote its last marker (-1 before any).
    """

    topic: str
    partition: int
    broker: int | None
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    current_txn_start_offset: int | None
    coordinator_epoch: int


def parse_describe_producers(text: str, topic: str, partition: int, broker: int | None = None) -> list[ProducerState]:
    """The table printed by ``kafka-transactions.sh describe-producers``, by producer id: the broker prints its
    hash map's order, neither creation nor id order, which a reader would take for a meaning (first = oldest?)."""
    rows = [
        ProducerState(
            topic=topic,
            partition=partition,
            broker=broker,
            producer_id=int(r["ProducerId"]),
            producer_epoch=int(r["ProducerEpoch"]),
            last_sequence=int(r["LastSequence"]),
            last_timestamp=int(r["LastTimestamp"]),
            current_txn_start_offset=opt_int(r["CurrentTransactionStartOffset"]),
            coordinator_epoch=int(r["LatestCoordinatorEpoch"]),
        )
        for r in parse_tsv(text)
    ]
    return sorted(rows, key=lambda r: r.producer_id)


def describe_producers(cluster: Cluster, topic: str, partition: int, broker: int | None = None) -> Rows[ProducerState]:
    """The active producers of ``topic-partition`` (one JVM call).

    ``broker=None`` asks the leader; a follower's answer shows that producer
    state is replicated with the log (each replica rebuilds it from the batches).
    """
    args = ["--bootstrap-server", "{bootstrap}", "describe-producers", "--topic", topic, "--partition", str(partition)]
    if broker is not None:
        args += ["--broker-id", str(broker)]
    out = cluster.tool("transactions", *args)
    return Rows(parse_describe_producers(out, topic, partition, broker), ProducerState)


def producer_snapshots(
    cluster: Cluster, topic: str, partition: int, broker: int | str | None = None, latest_only: bool = False
) -> Rows[SnapshotEntry]:
    """The producer-state ``.snapshot`` files of ``topic-partition`` on one replica, decoded.

    A partition that never rolled a segment and never shut down has none yet:
    the state lives in memory only (see :func:`describe_producers`).
    """
    node, folder, names = partition_files(cluster, topic, partition, broker, suffix=".snapshot")
    if latest_only and names:
        names = names[-1:]
    entries: list[SnapshotEntry] = []
    if names:
        for f in dump(cluster, node, folder, names, "--deep-iteration"):
            entries.extend(f.snapshot)
    return Rows(entries, SnapshotEntry)
