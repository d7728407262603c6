"""KIP-447's check of a transaction's group metadata, in a classic group and in a KIP-848 group (module 05).

A member (A) of a group owns both input partitions and keeps the group metadata it fetched; a second member
(B) joins and takes one partition. A's transactional producer (librdkafka: TxnOffsetCommit v3) then sends
offsets with the stale metadata and with fresh metadata, for the partition A kept and for the one that
moved; a Java producer of the pinned release (TxnOffsetCommit v6) sends A's stale metadata too. Every
answer is read on the wire (the fault proxy's trace). On Kafka 4.4.0 (``tests/integration/test_kip447.py``):

=========================  ====================  ================================================
offsets sent with          classic group         KIP-848 group (``group.protocol=consumer``)
=========================  ====================  ================================================
stale metadata, kept       ILLEGAL_GENERATION    NONE: A still owns it since that epoch (KIP-1251)
stale metadata, moved      ILLEGAL_GENERATION    ILLEGAL_GENERATION (v3), STALE_MEMBER_EPOCH (v6)
fresh metadata, either     NONE                  NONE
=========================  ====================  ================================================

A classic group checks the generation only: any change of it refuses the offsets, and a current one is
never asked which partitions the member owns. A KIP-848 group checks the member epoch and, since 4.3
(KIP-1251, assignment epochs), accepts an older epoch for a partition the member has owned since then.
The refusal's name depends on the request's version (KIP-1319, 4.4): STALE_MEMBER_EPOCH from
TxnOffsetCommit v6 (the Java 4.4 client), ILLEGAL_GENERATION up to v5 (librdkafka sends v3). Either way
the client's transaction becomes abortable.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from eoslab._librdkafka import EXPERIMENTS, LESSONS
from eoslab._wait import wait_until
from eoslab.demos.pipeline import GROUP_PROTOCOLS, PipelineError, write_inputs
from eoslab.faults import Proxy
from eoslab.inspect import Rows
from eoslab.java_client import JavaProducer

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

JOIN_S = 60.0
"""A's group formed, then B's rebalance done: a second or two with group.initial.rebalance.delay.ms = 0 and
KIP-848's 1 s heartbeats (eoslab.topology); 60 s for a busy laptop."""
CALL_S = 15.0
"""One transactional call: well under the 60 s transaction timeout, well over a TxnOffsetCommit's round trip."""
OFFSET = 5
"""The offset every attempt commits: any; what is judged is the answer, not the offset."""


@dataclass(frozen=True)
class Attempt:
    """One TxnOffsetCommit as the proxy saw it: which metadata, which partition, which client, the answer."""

    protocol: str  # the group's: "classic" or "consumer" (KIP-848)
    metadata: str  # "stale" (fetched before B joined) or "fresh"
    partition: str  # "kept" (still A's) or "moved" (B's now)
    client: str  # "librdkafka" or "Java"
    version: int  # TxnOffsetCommit's
    generation: int | None  # the classic generation or the KIP-848 member epoch it carried
    error: str  # the group coordinator's answer


def _consumer(bootstrap: str, group: str, client_id: str, protocol: str) -> Consumer:
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": client_id,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
        "logger": LESSONS,
    }
    if protocol == "consumer":
        conf["group.protocol"] = "consumer"  # KIP-848: the broker sets the session (6 s on this cluster)
    else:
        conf |= {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}
    return Consumer(conf)


def _owned(c: Consumer) -> list[int]:
    return sorted(tp.partition for tp in c.assignment())


def _librdkafka_attempt(producer: Producer, tp: TopicPartition, metadata: Any) -> None:
    """Offsets in a transaction, committed if the coordinator took them, aborted if it refused them."""
    producer.begin_transaction()
    try:
        producer.send_offsets_to_transaction([tp], metadata, CALL_S)
        producer.commit_transaction(CALL_S)
    except KafkaException as e:
        if not e.args[0].txn_requires_abort():
            raise
        producer.abort_transaction(CALL_S)


def stale_metadata(cluster: Cluster, protocol: str = "classic") -> Rows[Attempt]:
    """Run the experiment in a group of ``protocol`` (:data:`~eoslab.demos.pipeline.GROUP_PROTOCOLS`).

    Five attempts: librdkafka with stale and fresh metadata for the kept and the moved partition, then the Java
    producer with A's stale member id and generation (or epoch) for the moved one. Raises ``WaitTimeout`` when
    the group does not settle into one partition each within JOIN_S."""
    if protocol not in GROUP_PROTOCOLS:
        raise PipelineError(f"protocol={protocol!r}: use one of {GROUP_PROTOCOLS}.")
    run = f"kip447-{protocol}-{uuid.uuid4().hex[:6]}"
    src, group = f"{run}-in", f"{run}-group"
    cluster.admin.create_topic(src, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    write_inputs(cluster, src, 2 * OFFSET, 2)
    bootstrap = cluster.bootstrap_servers(proxied=True)  # through the proxy: its trace is the evidence
    a = _consumer(bootstrap, group, f"{run}-a", protocol)
    b = _consumer(bootstrap, group, f"{run}-b", protocol)
    producer = Producer(  # its TxnOffsetCommit is refused on purpose: the trace's answers are the result
        {"bootstrap.servers": bootstrap, "transactional.id": f"{run}-a", "client.id": f"{run}-a", "logger": EXPERIMENTS}
    )
    try:
        a.subscribe([src])

        def joined() -> bool:
            a.poll(0.2)
            return _owned(a) == [0, 1]

        wait_until(joined, timeout=JOIN_S, what=f"{run}-a's join")
        stale = a.consumer_group_metadata()
        producer.init_transactions(CALL_S)
        b.subscribe([src])

        def settled() -> bool:
            a.poll(0.1), b.poll(0.1)  # a classic member rejoins from poll(); KIP-848 reconciles there
            return len(_owned(a)) == len(_owned(b)) == 1

        wait_until(settled, timeout=JOIN_S, what=f"{run}'s rebalance to one partition each")
        kept, moved = TopicPartition(src, _owned(a)[0], OFFSET), TopicPartition(src, _owned(b)[0], OFFSET)
        for tp in (kept, moved):
            _librdkafka_attempt(producer, tp, stale)
        for tp in (kept, moved):
            _librdkafka_attempt(producer, tp, a.consumer_group_metadata())
        mine = _trace(cluster, f"{run}-a", 4)
        first = mine[0]["request"]  # the stale metadata as it went on the wire: A's member id and generation
        member, generation = first.get("member_id"), first.get("generation")
        _java_attempt(cluster, run, group, moved, (str(member), int(generation)))
        java = _trace(cluster, f"{run}-java", 1)
        return Rows(
            [_attempt(r, protocol, kept.partition, generation, "librdkafka") for r in mine]
            + [_attempt(r, protocol, kept.partition, generation, "Java") for r in java],
            Attempt,
        )
    finally:
        producer.flush(1)
        a.close()
        b.close()


def _java_attempt(cluster: Cluster, run: str, group: str, tp: TopicPartition, member: tuple[Any, Any]) -> None:
    from eoslab.demos._clients import JAVA_PRODUCER

    conf = {
        **JAVA_PRODUCER,
        "bootstrap.servers": cluster.bootstrap_servers(proxied=True),
        "client.id": f"{run}-java",
        "transactional.id": f"{run}-java",
    }
    with JavaProducer(conf) as j:
        j.init_transactions()
        j.begin_transaction()
        answer = j.send_offsets_to_transaction(group, tp.topic, tp.partition, tp.offset, (member[0], member[1]))
        j.abort_transaction() if not answer.get("ok") else j.commit_transaction()


def _trace(cluster: Cluster, client_id: str, at_least: int) -> list[dict[str, Any]]:
    """The client's answered TxnOffsetCommit requests in the proxy's trace, oldest first (the proxy records an
    answer as it relays it: the client may have it a moment before the trace does)."""
    deadline = time.monotonic() + CALL_S
    while True:
        rows = [r for r in Proxy.connect(cluster).trace(client_id=client_id, api="TxnOffsetCommit") if r["response"]]
        if len(rows) >= at_least or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)


def _attempt(row: dict[str, Any], protocol: str, kept: int, stale: Any, client: str) -> Attempt:
    req, resp = row["request"], row["response"] or {}
    return Attempt(
        protocol=protocol,
        metadata="stale" if req.get("generation") == stale else "fresh",
        partition="kept" if req["items"][0]["partition"] == kept else "moved",
        client=client,
        version=row["version"],
        generation=req.get("generation"),
        error=resp.get("error", "?"),
    )
