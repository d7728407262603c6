"""KIP-1228 (Kafka 4.2): a stale transaction marker refused at the partition leader.

KAFKA-17754's other half. With transaction version 2 the producer's epoch is bumped by every EndTxn, so
transaction N's markers carry the epoch that transaction N+1 then writes with. A copy of N's COMMIT marker
delivered late, while N+1 is open, names the producer's CURRENT epoch: before KIP-1228 a partition leader
took a marker whose epoch was not below the producer's (``>=``), and would have committed N+1's records
written so far. Since 4.2 the transaction coordinator sends WriteTxnMarkers v2 with each marker's
transaction version, and for a TV2 marker the leader wants an epoch ABOVE the producer's (``>``; an
idempotent retry of the marker of a transaction already complete aside, KAFKA-19999), so the late copy is
refused with INVALID_PRODUCER_EPOCH.

WriteTxnMarkers goes from the transaction coordinator to the partition leaders, broker to broker: it never
passes the client fault proxy, which can therefore neither hold nor replay one. What the kit can do is what
a late copy would do: send the same marker to the leader itself, on the broker's client listener (the
course cluster has no authorizer, so the CLUSTER_ACTION this API needs is granted). :func:`stale_marker`
replays N's marker during N+1 of a Java (TV2) producer, as WriteTxnMarkers v2 with ``TransactionVersion``
2 (what a 4.2+ coordinator sends) or as v1 (what a 4.1 coordinator sent, and what a 4.4 leader still judges
by the old rule), and reads what a ``read_committed`` consumer sees before N+1 commits.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eoslab.demos._clients import JAVA_PRODUCER
from eoslab.faults import error_name
from eoslab.history import read_final
from eoslab.inspect import batches_of
from eoslab.java_client import JavaProducer
from eoslab.protocol import KafkaConnection

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

FIRST_HALF = "N+1, first half"
SECOND_HALF = "N+1, second half"


@dataclass(frozen=True)
class StaleMarker:
    """One replay of transaction N's COMMIT marker during transaction N+1, and what it did."""

    version: int  # WriteTxnMarkers': 1 (no transaction version: the old rule) or 2 (TransactionVersion 2)
    producer_id: int
    marker_epoch: int  # N's marker's epoch, which is N+1's epoch too (TV2: EndTxn bumped it)
    coordinator_epoch: int
    answer: str  # the partition leader's answer for the partition
    seen_early: tuple[str, ...]  # what read_committed saw of the partition before N+1 committed
    seen_at_end: tuple[str, ...]  # and after


def stale_marker(cluster: Cluster, version: int = 2) -> StaleMarker:
    """Replay transaction N's COMMIT marker to the partition leader while transaction N+1 is open.

    A new topic with one partition led by broker 1; a Java producer of the pinned release (transaction
    version 2) commits N, begins N+1 and writes its first half; the kit sends N's marker again
    (``version`` 1 or 2 of WriteTxnMarkers); a ``read_committed`` read; N+1's second half and commit;
    another read. About 10 s."""
    run = uuid.uuid4().hex[:6]
    topic, tid = f"kip1228-{run}", f"kip1228-{run}"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3]])
    conf = {**JAVA_PRODUCER, "bootstrap.servers": cluster.bootstrap_servers(), "transactional.id": tid}
    with JavaProducer({**conf, "client.id": tid}) as java:
        java.init_transactions()
        java.begin_transaction()
        java.send(topic, 0, "N")
        java.commit_transaction()
        java.begin_transaction()
        java.send(topic, 0, FIRST_HALF)
        java.flush()  # N+1 is open on the partition, at the epoch N's EndTxn answered with
        (marker,) = [b for b in batches_of(cluster, [(topic, 0)])[(topic, 0)] if b.is_control]
        answer = _replay(cluster, version, marker.producer_id, marker.producer_epoch, marker.coordinator_epoch, topic)
        early = read_final(cluster, topic, "read_committed")
        java.send(topic, 0, SECOND_HALF)
        java.commit_transaction()
    end = read_final(cluster, topic, "read_committed")
    return StaleMarker(
        version=version,
        producer_id=marker.producer_id,
        marker_epoch=marker.producer_epoch,
        coordinator_epoch=marker.coordinator_epoch or 0,
        answer=answer,
        seen_early=tuple(str(r.value) for r in early.records),
        seen_at_end=tuple(str(r.value) for r in end.records),
    )


def _replay(
    cluster: Cluster, version: int, producer_id: int, epoch: int, coordinator_epoch: int | None, topic: str
) -> str:
    """Send one COMMIT marker for ``topic``-0 to its leader, as a transaction coordinator would; its answer."""
    marker = {
        "ProducerId": producer_id,
        "ProducerEpoch": epoch,
        "TransactionResult": True,  # COMMIT
        "Topics": [{"Name": topic, "PartitionIndexes": [0]}],
        "CoordinatorEpoch": coordinator_epoch or 0,  # the coordinator's own: an older one is refused as fenced
    }
    if version >= 2:
        marker["TransactionVersion"] = 2  # what a 4.2+ coordinator says of a Java 4.x (TV2) producer's marker
    leader = cluster.topology.broker(cluster.leader(topic, 0))
    with KafkaConnection(*leader.direct_address(), client_id="eoslab-late-marker") as conn:
        body = conn.request("WriteTxnMarkers", version, {"Markers": [marker]})
    (code,) = [p["ErrorCode"] for m in body["Markers"] for t in m["Topics"] for p in t["Partitions"]]
    return str(error_name(code))
