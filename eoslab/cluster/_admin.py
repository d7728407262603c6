"""What Kafka itself says about the cluster, asked in-process (no CLI JVM).

The confluent-kafka AdminClient answers brokers, topics, leaders and ISR;
the two questions it cannot ask (DescribeQuorum, api key 55, and a
FindCoordinator that does not allocate a producer id) go out as raw requests
through :mod:`eoslab.protocol`, which encodes them from Kafka's own schemas.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import ElectionType, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic, ResourceType

from eoslab._librdkafka import KIT
from eoslab._timeouts import REQUEST, TOPIC
from eoslab._wait import wait_until
from eoslab.errors import ClusterError, ClusterNotRunning
from eoslab.protocol import KafkaConnection
from eoslab.topology import Node, Topology

log = logging.getLogger(__name__)

VIEW_TIMEOUT = 3.0
"""One broker's Metadata answer inside a wait: a broker that does not answer in time is left out as if dead,
so this must outlast a busy moment of a live broker (2 s proved tight on a loaded 2-core machine)."""

RECONNECT_BACKOFF_MAX_MS = 1000
"""Lessons kill brokers on purpose: with librdkafka's default 10 s reconnect back-off ceiling, a request to
a broker restarted a moment ago could wait longer than ``socket.timeout.ms`` for its connection."""


@dataclass(frozen=True)
class PartitionState:
    """Leader and ISR of one partition, as the metadata says now."""

    topic: str
    partition: int
    leader: int  # -1 when there is none
    replicas: tuple[int, ...]
    isr: tuple[int, ...]

    @property
    def preferred_leader(self) -> int:
        return self.replicas[0] if self.replicas else -1


@dataclass(frozen=True)
class QuorumState:
    """The KRaft quorum of ``__cluster_metadata``, from DescribeQuorum."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[int, ...]
    observers: tuple[int, ...]

    def __str__(self) -> str:
        """The quorum as `kafka-metadata-quorum describe --status` names its fields."""
        return (
            f"LeaderId {self.leader_id}, LeaderEpoch {self.leader_epoch}, HighWatermark {self.high_watermark}, "
            f"CurrentVoters {list(self.voters)}, CurrentObservers {list(self.observers)}"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))  # a cell's result reads like Kafka's tool, repr() keeps the fields


def admin_client(bootstrap: str, timeout_ms: int = int(REQUEST * 1000)) -> AdminClient:
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "socket.timeout.ms": timeout_ms,
        "reconnect.backoff.max.ms": RECONNECT_BACKOFF_MAX_MS,
        "client.id": "eoslab-admin",
        "logger": KIT,
    }
    return AdminClient(conf)


class Admin:
    """A thin, typed layer over the AdminClient for the questions the kit asks."""

    def __init__(self, topology: Topology, bootstrap: str) -> None:
        self.topology = topology
        self.bootstrap = bootstrap
        self.client = admin_client(bootstrap)

    def brokers(self, timeout: float = REQUEST) -> list[int]:
        """Ids of the registered, unfenced brokers (fenced ones are not in the answer)."""
        desc = self.client.describe_cluster(request_timeout=timeout).result(timeout=timeout + 1)
        return sorted(n.id for n in desc.nodes)

    def controller_id(self, timeout: float = REQUEST) -> int:
        """What brokers report as "controller": in KRaft, a random broker (KIP-590), not the quorum leader."""
        desc = self.client.describe_cluster(request_timeout=timeout).result(timeout=timeout + 1)
        return desc.controller.id if desc.controller else -1

    def partitions(self, topic: str | None = None, timeout: float = REQUEST) -> list[PartitionState]:
        """Leader, replicas and ISR of every partition (of one topic, or all)."""
        md = self.client.list_topics(topic=topic, timeout=timeout)
        out = []
        for name, tmd in sorted(md.topics.items()):
            if tmd.error is not None:
                if topic is not None:
                    raise KafkaException(tmd.error)
                continue
            for pid, pmd in sorted(tmd.partitions.items()):
                out.append(PartitionState(name, pid, pmd.leader, tuple(pmd.replicas), tuple(pmd.isrs)))
        return out

    def topics(self, timeout: float = REQUEST) -> list[str]:
        return sorted(self.client.list_topics(timeout=timeout).topics)

    def create_topic(
        self,
        name: str,
        *,
        partitions: int | None = None,
        replica_assignment: list[list[int]] | None = None,
        config: dict[str, str] | None = None,
        timeout: float = TOPIC,
    ) -> None:
        if replica_assignment is not None:
            new = NewTopic(
                name, num_partitions=len(replica_assignment), replica_assignment=replica_assignment, config=config or {}
            )
        else:
            new = NewTopic(name, num_partitions=partitions or 1, config=config or {})
        self.client.create_topics([new], request_timeout=timeout)[name].result(timeout=timeout + 1)
        # CreateTopics returns once the controller committed the topic; each broker learns of it
        # from the metadata log a moment later, and the AdminClient asks whichever broker it likes.
        # Wait until EVERY live broker's own metadata shows every partition led.
        n = len(replica_assignment) if replica_assignment is not None else (partitions or 1)

        def everywhere() -> bool:
            views = partition_views(self.topology, name)
            return bool(views) and all(sum(leader >= 0 for leader in v.values()) == n for v in views.values())

        wait_until(
            everywhere,
            timeout=timeout,
            what=f"every broker to know topic {name!r} with {n} led partition(s)",
            interval=0.1,
            describe=lambda: f"brokers' views: {partition_views(self.topology, name)}",
        )

    def delete_topic(self, name: str, timeout: float = TOPIC) -> None:
        self.client.delete_topics([name], request_timeout=timeout)[name].result(timeout=timeout + 1)

    def topic_config(self, name: str, timeout: float = REQUEST) -> dict[str, str]:
        res = ConfigResource(ResourceType.TOPIC, name)

        def ask() -> dict[str, str] | None:
            try:
                entries = self.client.describe_configs([res], request_timeout=timeout)[res].result(timeout + 1)
            except KafkaException as exc:
                # A broker that has not replayed the topic's creation yet answers UNKNOWN_TOPIC_OR_PART.
                if exc.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    return None
                raise
            return {k: v.value for k, v in entries.items()}

        found = wait_until(ask, timeout=timeout, what=f"the configuration of topic {name!r}", interval=0.2)
        assert found is not None
        return found

    def elect_preferred_leaders(self, timeout: float = TOPIC) -> None:
        """Move every leader back to its preferred replica (auto rebalance is off on purpose)."""

        attempt = min(REQUEST, timeout / 3)

        def elect() -> tuple[dict[Any, Any]]:
            # (confluent-kafka 2.16 raises SystemError when elect_leaders gets request_timeout=...)
            # A timeout is retried: the controller as the client last saw it may have just restarted,
            # and a new request is routed to the controller of the newest metadata. Each attempt waits
            # at most a third of the whole wait, so at least three attempts fit in it (one attempt as
            # long as the wait, as before, made the loop a single try).
            return (self.client.elect_leaders(ElectionType.PREFERRED, None).result(timeout=attempt),)

        (results,) = wait_until(elect, timeout=timeout, what="a preferred leader election", interval=0.5)
        for tp, err in results.items():
            # ELECTION_NOT_NEEDED: already led by the preferred replica.
            if err is not None and "ELECTION_NOT_NEEDED" not in str(err):
                log.info("preferred election for %s-%s: %s", tp.topic, tp.partition, err)


NOT_LEADER_OR_FOLLOWER = 6


def _ask_quorum(controller: Node, timeout: float) -> tuple[int, dict[str, Any]]:
    """DescribeQuorum (api key 55) asked of one controller directly (KIP-919 lets it answer); returns the
    error code and the partition's answer."""
    with KafkaConnection(*controller.direct_address(), client_id="eoslab-admin", timeout=timeout) as conn:
        resp = conn.request(
            "DescribeQuorum",
            0,
            {"Topics": [{"TopicName": "__cluster_metadata", "Partitions": [{"PartitionIndex": 0}]}]},
        )
    part = resp["Topics"][0]["Partitions"][0]
    return resp.get("ErrorCode", 0) or part.get("ErrorCode", 0), part


def controller_serves(controller: Node, timeout: float = REQUEST) -> bool:
    """Whether ``controller``'s own process answers DescribeQuorum. Only the quorum's leader describes
    it; a voter that is not the leader answers NOT_LEADER_OR_FOLLOWER (KafkaRaftClient), which proves
    just as well that the process is up and serving."""
    err, _ = _ask_quorum(controller, timeout)
    if err not in (0, NOT_LEADER_OR_FOLLOWER):
        raise ClusterError(
            f"{controller.name} answered DescribeQuorum with error {err}: see `eoslab logs {controller.name}`."
        )
    return True


def describe_quorum(controller: Node, timeout: float = REQUEST) -> QuorumState:
    """The quorum as ``controller`` describes it; only the leader does (others: error 6)."""
    err, part = _ask_quorum(controller, timeout)
    if err:
        raise ClusterError(
            f"{controller.name} answered DescribeQuorum with error {err}: see `eoslab logs {controller.name}`."
        )
    return QuorumState(
        leader_id=part["LeaderId"],
        leader_epoch=part["LeaderEpoch"],
        high_watermark=part["HighWatermark"],
        voters=tuple(sorted(v["ReplicaId"] for v in part["CurrentVoters"])),
        observers=tuple(sorted(o["ReplicaId"] for o in part["Observers"])),
    )


def unfenced_brokers(topology: Topology, timeout: float = REQUEST) -> list[int]:
    """DescribeCluster v0 (api key 60, KIP-700) asked of the first broker that answers: the ids of the
    registered, unfenced brokers (v0 leaves fenced ones out), as that broker's metadata says.

    Raw, like :func:`describe_quorum`, for the start-up wait: a broker not listening yet refuses at once
    and the next one is asked. Through the AdminClient, whose connections back off after each refusal,
    the kit saw three unfenced brokers up to 1.6 s after the last one logged that it was.
    """
    errors = []
    for broker in topology.brokers:
        try:
            with KafkaConnection(*broker.direct_address(), client_id="eoslab-admin", timeout=timeout) as conn:
                resp = conn.request("DescribeCluster", 0, {"IncludeClusterAuthorizedOperations": False})
        except Exception as exc:  # noqa: BLE001 - not up yet: ask the next broker
            errors.append(f"{broker.name}: {exc}")
            continue
        if resp["ErrorCode"]:
            errors.append(f"{broker.name}: DescribeCluster answered error {resp['ErrorCode']}")
            continue
        return sorted(b["BrokerId"] for b in resp["Brokers"])
    raise ClusterNotRunning("No broker answered DescribeCluster (" + "; ".join(errors) + "): is the cluster up?")


def find_coordinators(
    broker: Node, key_type: int, keys: list[str], timeout: float = REQUEST
) -> dict[str, tuple[int, int]]:
    """FindCoordinator v4 (KIP-699, batched): key -> (error code, coordinator node id).

    ``key_type`` 0 = group, 1 = transaction. The first such request for a key
    type makes the broker create ``__consumer_offsets`` / ``__transaction_state``;
    unlike ``init_transactions()`` it does not allocate a producer id.
    """
    with KafkaConnection(*broker.direct_address(), client_id="eoslab-admin", timeout=timeout) as conn:
        resp = conn.request("FindCoordinator", 4, {"KeyType": key_type, "CoordinatorKeys": keys})
    return {c["Key"]: (c["ErrorCode"], c["NodeId"]) for c in resp["Coordinators"]}


def partition_views(topology: Topology, topic: str, timeout: float = VIEW_TIMEOUT) -> dict[int, dict[int, int]]:
    """Each reachable broker's own metadata for ``topic``: broker id -> {partition: leader}
    (``{}`` from a broker that does not know the topic yet; a dead broker is left out).

    Brokers learn leader changes from the metadata log one by one, so for a moment
    after an election they disagree; the AdminClient asks whichever broker it likes.
    A lesson that says "broker 1 leads A" must first wait until every broker says so.
    """
    views: dict[int, dict[int, int]] = {}
    for broker in topology.brokers:
        try:
            with KafkaConnection(*broker.direct_address(), client_id="eoslab-admin", timeout=timeout) as conn:
                resp = conn.request("Metadata", None, {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False})
        except Exception:  # noqa: BLE001 - a dead broker has no view; the others still count
            continue
        views[broker.node_id] = {}
        for t in resp["Topics"]:
            if t.get("Name") == topic and t.get("ErrorCode", 0) == 0:
                views[broker.node_id] = {p["PartitionIndex"]: p["LeaderId"] for p in t["Partitions"]}
    return views


def broker_answers(broker: Node, timeout: float = REQUEST) -> None:
    """The broker's own process answers a Metadata request on its own port (an exception when it does not)."""
    with KafkaConnection(*broker.direct_address(), client_id="eoslab-admin", timeout=timeout) as conn:
        conn.request("Metadata", None, {"Topics": [], "AllowAutoTopicCreation": False})


def serving_report(brokers: Iterable[Node], timeout: float = REQUEST) -> str:
    """Which brokers answer a Metadata request on their own port right now (a fresh connection each)."""
    answers = []
    for b in brokers:
        try:
            broker_answers(b, timeout)
            answers.append(f"{b.name} answers")
        except Exception as exc:  # noqa: BLE001 - the failure is the report
            answers.append(f"{b.name}: {type(exc).__name__}: {exc}")
    return "; ".join(answers)
