"""Producer-id blocks: which broker may hand out which producer ids.

Since KIP-730 the active controller grants blocks of 1000 ids
(``ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE``) to a broker that asks with
AllocateProducerIds, and records each grant as a ``ProducerIdsRecord``
(BrokerId, BrokerEpoch, NextProducerId) in ``__cluster_metadata``.
``NextProducerId`` is the EXCLUSIVE end of the block just granted, so the
block is ``[NextProducerId - 1000, NextProducerId)``. Seen on the real 4.1.2
cluster: the first grant (to broker 3) said ``nextProducerId: 1000`` and
broker 3 handed out ids 0, 1, 2; the next grant (broker 2) said 2000 and
broker 2 handed out 1000.

The records are read from a CONTROLLER's copy of the metadata log (every
voter has it): the ``.log`` segments and, once the log was snapshotted, the
``.checkpoint`` files. A snapshot keeps only the newest grant, and without its
grantee: seen on the real cluster after about an hour up, its ProducerIdsRecord
says ``brokerId: -1, brokerEpoch: -1`` (the metadata image holds only
NextProducerId). Listed after the log, such a copy would look like the newest
grant of a block to "broker -1"; so a snapshot's grant is kept only when the
log no longer holds it, and the grants are returned in grant order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from eoslab.errors import ClusterError
from eoslab.inspect._dumplog import DumpedFile
from eoslab.inspect._dumptool import dump, list_folder
from eoslab.inspect._table import Rows

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

PRODUCER_ID_BLOCK_SIZE = 1000
METADATA_FOLDER = "__cluster_metadata-0"


@dataclass(frozen=True)
class ProducerIdBlock:
    """One grant of producer ids: ``[first_producer_id, next_producer_id)`` to ``broker_id``.

    ``source`` is ``"log"`` (a metadata-log record at ``offset``) or
    ``"snapshot"`` (a ``.checkpoint``; its offsets are those inside the snapshot).
    ``append_time_ms`` is the timestamp of the batch the controller wrote.
    """

    broker_id: int
    broker_epoch: int
    next_producer_id: int
    offset: int
    append_time_ms: int
    source: str
    file: str

    @property
    def first_producer_id(self) -> int:
        return self.next_producer_id - PRODUCER_ID_BLOCK_SIZE

    @property
    def last_producer_id(self) -> int:
        return self.next_producer_id - 1

    def __contains__(self, producer_id: object) -> bool:
        return isinstance(producer_id, int) and self.first_producer_id <= producer_id < self.next_producer_id

    FRAME_EXTRAS = ("first_producer_id", "last_producer_id")


def parse_pid_blocks(files: list[DumpedFile]) -> list[ProducerIdBlock]:
    """The grants in ``--cluster-metadata-decoder`` output, in grant order (ids only grow), each once.

    A snapshot's ``PRODUCER_IDS_RECORD`` (``broker_id`` -1) is kept only when no log record holds
    the same grant: after the log segments holding it were deleted, it is the only trace left.
    """
    out = []
    for f in files:
        source = "snapshot" if f.path.endswith(".checkpoint") else "log"
        for b in f.batches:
            for r in b.records:
                v = r.value_json()
                if not isinstance(v, dict) or v.get("type") != "PRODUCER_IDS_RECORD":
                    continue
                d = v["data"]
                out.append(
                    ProducerIdBlock(
                        broker_id=d["brokerId"],
                        broker_epoch=d["brokerEpoch"],
                        next_producer_id=d["nextProducerId"],
                        offset=r.offset,
                        append_time_ms=b.timestamp,
                        source=source,
                        file=f.path,
                    )
                )
    logged = {b.next_producer_id for b in out if b.source == "log"}
    kept = {b.next_producer_id: b for b in reversed(out) if b.source == "log" or b.next_producer_id not in logged}
    return sorted(kept.values(), key=lambda b: b.next_producer_id)


def producer_id_blocks(
    cluster: Cluster, controller: str | None = None, include_snapshots: bool = True
) -> Rows[ProducerIdBlock]:
    """Every producer-id grant in the metadata log of ``controller`` (default: the quorum leader).

    One DumpLogSegments call over all segments (and ``.checkpoint`` snapshots).
    Sealed segments are cached; the active one changes every 500 ms (the
    controller appends a NoOpRecord, KIP-835), so it is read each time.
    """
    if controller is None:
        leader = cluster.quorum().leader_id
        node = next(c for c in cluster.topology.controllers if c.node_id == leader)
    else:
        node = cluster.topology.node(controller)
        if node.is_broker:
            raise ClusterError(
                f"{node.name} is a broker: producer-id grants are read from a controller's "
                "metadata log; pass controller='controller-1' (or 2, 3)."
            )
    names = list_folder(cluster, node, METADATA_FOLDER) or []
    wanted = [n for n in names if n.endswith(".log") or (include_snapshots and n.endswith(".checkpoint"))]
    if not wanted:
        raise ClusterError(
            f"{node.name} has no {METADATA_FOLDER} folder with segments: is it a controller "
            "of this cluster, and was the cluster started?"
        )
    files = dump(cluster, node, METADATA_FOLDER, wanted, "--cluster-metadata-decoder")
    return Rows(parse_pid_blocks(files), ProducerIdBlock)


def block_of(producer_id: int, blocks: list[ProducerIdBlock]) -> ProducerIdBlock | None:
    """The grant that contains ``producer_id`` (the latest such, if a snapshot repeats it)."""
    found = [b for b in blocks if producer_id in b]
    return found[-1] if found else None
