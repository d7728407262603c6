"""Putting a coordinator on a chosen broker, the way an operator would: reorder replicas, then elect.

A transactional id's coordinator is the leader of partition
``Utils.abs(id.hashCode()) % 50`` of ``__transaction_state``; a group's, the
leader of the same partition number of ``__consumer_offsets``. So "broker 3
coordinates my-txn-app" is a statement about leadership, and leadership is
arranged in two steps that move no data (every broker already holds a replica,
replication factor 3):

1. AlterPartitionReassignments (API key 45, KIP-455) with the same three
   replicas, the chosen broker FIRST: it becomes the partition's preferred
   leader (``kafka-reassign-partitions.sh`` does the same);
2. ElectLeaders (API key 43, type PREFERRED, KIP-460): the preferred replica
   takes over (``kafka-leader-election.sh``).

``eoslab heal`` elects preferred leaders too, so the arrangement survives a heal.
The old leader stops coordinating: its clients get NOT_COORDINATOR, find the new
one (FindCoordinator) and retry; the new leader first loads the partition
(COORDINATOR_LOAD_IN_PROGRESS meanwhile).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from eoslab import inspect as ins
from eoslab._wait import wait_until
from eoslab.errors import ClusterError
from eoslab.protocol import KafkaConnection

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

INTERNAL_TOPIC = {"transaction": "__transaction_state", "group": "__consumer_offsets"}
ELECTION_WAIT = 30.0  # an election is milliseconds; a broker restarted a moment ago may need seconds to catch up


@dataclass(frozen=True)
class Moved:
    """What :func:`make_leader` did to one partition."""

    topic: str
    partition: int
    replicas_before: tuple[int, ...]
    leader_before: int
    replicas_after: tuple[int, ...]
    leader_after: int

    @property
    def changed(self) -> bool:
        return self.leader_before != self.leader_after


def _reorder(cluster: Cluster, topic: str, partition: int, replicas: list[int]) -> None:
    body = {
        "TimeoutMs": 15000,
        "Topics": [{"Name": topic, "Partitions": [{"PartitionIndex": partition, "Replicas": replicas}]}],
    }
    node = cluster.topology.brokers[0]
    with KafkaConnection(*node.direct_address(), client_id="eoslab-arrange", timeout=20.0) as conn:
        resp = conn.request("AlterPartitionReassignments", None, body)
    errs = [resp.get("ErrorCode", 0)] + [p["ErrorCode"] for t in resp["Responses"] for p in t["Partitions"]]
    if any(errs):
        raise ClusterError(
            f"AlterPartitionReassignments of {topic}-{partition} to {replicas} answered error "
            f"{next(e for e in errs if e)} ({resp.get('ErrorMessage')}): run `eoslab heal` and try again."
        )


def make_leader(cluster: Cluster, topic: str, partition: int, broker: int) -> Moved:
    """Make ``broker`` the preferred AND current leader of ``topic-partition`` (it must hold a replica)."""
    from confluent_kafka import ElectionType, TopicPartition

    before = cluster.partition(topic, partition)
    if broker not in before.replicas:
        raise ClusterError(
            f"Broker {broker} holds no replica of {topic}-{partition} (replicas {list(before.replicas)}): "
            "a leader must be one of them."
        )
    want = [broker, *[r for r in before.replicas if r != broker]]
    if list(before.replicas) != want:
        _reorder(cluster, topic, partition, want)
        wait_until(
            lambda: list(cluster.partition(topic, partition).replicas) == want,
            timeout=ELECTION_WAIT,
            what=f"the replica list of {topic}-{partition} to become {want}",
        )

    def elected() -> bool:
        if cluster.leader(topic, partition) == broker:
            return True
        tp = TopicPartition(topic, partition)
        cluster.admin.client.elect_leaders(ElectionType.PREFERRED, [tp]).result(timeout=15)
        return False

    wait_until(elected, timeout=ELECTION_WAIT, interval=0.3, what=f"broker {broker} to lead {topic}-{partition}")
    # Every broker must know before a client asks any of them (FindCoordinator answers from local metadata).
    wait_until(
        lambda: all(v == broker for v in leader_views(cluster, topic, partition).values()),
        timeout=ELECTION_WAIT,
        interval=0.1,
        what=f"every broker to see broker {broker} lead {topic}-{partition}",
    )
    return Moved(topic, partition, before.replicas, before.leader, tuple(want), broker)


def leader_views(cluster: Cluster, topic: str, partition: int) -> dict[int, int]:
    """Each live broker's OWN metadata answer: broker id -> the leader it names for ``topic-partition``.

    Brokers learn an election from the metadata log one by one; for a moment they disagree.
    """
    views: dict[int, int] = {}
    for b in cluster.topology.brokers:
        try:
            with KafkaConnection(*b.direct_address(), client_id="eoslab-arrange", timeout=3.0) as conn:
                resp = conn.request("Metadata", None, {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False})
        except Exception:  # noqa: BLE001 - a dead broker has no view
            continue
        for t in resp["Topics"]:
            for p in t.get("Partitions") or []:
                if t.get("Name") == topic and p["PartitionIndex"] == partition:
                    views[b.node_id] = p["LeaderId"]
    return views


def make_coordinator(cluster: Cluster, key: str, kind: str = "transaction", broker: int = 3) -> Moved:
    """Make ``broker`` the coordinator of ``key`` (a transactional id, or a group id with ``kind="group"``)."""
    if kind not in INTERNAL_TOPIC:
        raise ClusterError(f"Unknown coordinator kind {kind!r}: use 'transaction' or 'group'.")
    topic = INTERNAL_TOPIC[kind]
    return make_leader(cluster, topic, ins.coordinator_partition(key), broker)


def wait_coordinator(cluster: Cluster, key: str, kind: str = "transaction", broker: int | None = None) -> int:
    """Until FindCoordinator names a coordinator for ``key`` (``broker`` if given) that has loaded it."""

    def found() -> int | None:
        c = ins.coordinator(cluster, key, kind)  # type: ignore[arg-type]
        ok = c.error is None and c.reported is not None and c.reported >= 0
        return c.reported if ok and (broker is None or c.reported == broker) else None

    got = wait_until(found, timeout=ELECTION_WAIT, what=f"FindCoordinator to name the {kind} coordinator of {key!r}")
    assert got is not None
    return got
