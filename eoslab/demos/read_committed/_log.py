"""A partition log written from a pattern: committed, aborted and open transactions, and plain records.

A pattern is a list of :class:`Op`: an actor (``"plain"`` for the non-transactional,
idempotent producer, any other name for a transactional producer of its own
``transactional.id``) sends records, commits or aborts. A transactional actor's first
send after an end begins its next transaction; a transaction not ended when the pattern
ends stays OPEN (its producer is kept alive, so its timeout is the only other end).

Every record's value names its actor and transaction (``t1#2:0`` = actor t1, its 2nd
transaction, first record), so a consumer's answer can be judged record by record. Each
end waits for its markers (the coordinator writes them after EndTxn answered): the next
actor's records then come after them in the log, and a table of the log reads in order.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from eoslab._librdkafka import LESSONS
from eoslab.clients import write_all
from eoslab.demos._clients import TxnProducer, read_values, run_id, transactional_producer, wait_settled

if TYPE_CHECKING:
    from confluent_kafka import Producer

    from eoslab.cluster import Cluster

Action = Literal["send", "commit", "abort"]
PLAIN = "plain"
FATES = ("committed", "aborted", "open", "plain")
PLAIN_LOGGER = LESSONS.getChild("read_committed")
"""The plain producer's librdkafka log: "Coordinator load in progress: retrying" (a new cluster's first
idempotent producer) is a retry, not news; errors still show."""
PLAIN_LOGGER.setLevel(logging.ERROR)

OPEN_TXN_TIMEOUT_MS = 300_000
"""An open transaction of a lesson must outlive the cells that look at it: 5 min (the broker allows 15,
``transaction.max.timeout.ms``); librdkafka requires message.timeout.ms <= it."""
LOG_PRODUCER: dict[str, Any] = {
    "transaction.timeout.ms": OPEN_TXN_TIMEOUT_MS,
    "linger.ms": 0,  # each send is its own batch, acknowledged before the next op: offsets follow the pattern
}


@dataclass(frozen=True)
class Op:
    """One step of a pattern: ``actor`` sends ``n`` records, or ends its transaction."""

    actor: str
    action: Action = "send"
    n: int = 1


@dataclass
class LogRecord:
    """One data record the pattern wrote, with its fate."""

    value: str
    actor: str
    txn: int  # the actor's transaction number (0 for plain records)
    fate: str  # committed | aborted | open | plain
    offset: int = -1


@dataclass
class WrittenLog:
    """A partition written from a pattern; the producers of its open transactions are kept here."""

    cluster: Cluster
    topic: str
    partition: int
    pattern: list[Op]
    records: list[LogRecord] = field(default_factory=list)
    producers: dict[str, TxnProducer] = field(default_factory=dict)
    open_actors: list[str] = field(default_factory=list)

    def producer_id(self, actor: str) -> int:
        """The producer id an actor writes with (from librdkafka's own statistics)."""
        return self.producers[actor].eos().producer_id

    def end(self, actor: str, how: Literal["commit", "abort"] = "commit") -> None:
        """End an actor's open transaction (its records' fate changes with it)."""
        p = self.producers[actor]
        p.commit_transaction(30) if how == "commit" else p.abort_transaction(30)
        wait_settled(self.cluster, [p.transactional_id])
        fate = "committed" if how == "commit" else "aborted"
        for r in self.records:
            if r.actor == actor and r.fate == "open":
                r.fate = fate
        self.open_actors.remove(actor)

    def close(self, how: Literal["commit", "abort"] = "abort") -> None:
        """End every open transaction (``how``) and close the producers."""
        for actor in list(self.open_actors):
            self.end(actor, how)
        for p in self.producers.values():
            p.flush(5)
        self.producers.clear()

    def by_offset(self) -> dict[int, LogRecord]:
        return {r.offset: r for r in self.records}


def random_pattern(rng: random.Random, actors: int = 3, steps: int = 10, open_txns: int = 1) -> list[Op]:
    """A random interleaving of ``actors`` transactional producers and plain records.

    Every actor commits or aborts at least once; ``open_txns`` of them end with an open
    transaction; plain records fall between. Used by the lab's checks, so no two runs agree.
    """
    names = [f"t{i + 1}" for i in range(actors)]
    ops: list[Op] = []
    in_txn: set[str] = set()
    ended: set[str] = set()
    for _ in range(steps):
        who = rng.choice([*names, PLAIN])
        if who == PLAIN:
            ops.append(Op(PLAIN, "send", rng.randint(1, 2)))
        elif who in in_txn and rng.random() < 0.5:
            ops.append(Op(who, rng.choice(("commit", "abort"))))
            in_txn.discard(who)
            ended.add(who)
        else:
            ops.append(Op(who, "send", rng.randint(1, 2)))
            in_txn.add(who)
    for who in names:  # every actor ends one transaction at least once, and none is left open here
        if who not in ended and who not in in_txn:
            ops.append(Op(who, "send", 1))
            in_txn.add(who)
        if who in in_txn:
            ops.append(Op(who, rng.choice(("commit", "abort"))))
            in_txn.discard(who)
    stay_open = rng.sample(names, min(open_txns, len(names)))
    for who in stay_open:
        ops.append(Op(who, "send", rng.randint(1, 2)))
        if rng.random() < 0.6:
            ops.append(Op(PLAIN, "send", 1))  # a plain record behind the open transaction
    return ops


def _plain_producer(cluster: Cluster, proxied: bool) -> Producer:
    from confluent_kafka import Producer

    return Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers(proxied=proxied),
            "enable.idempotence": True,  # producer id + sequence, no transaction: a plain, non-transactional batch
            "acks": "all",
            "linger.ms": 0,
            "logger": PLAIN_LOGGER,
        }
    )


@dataclass
class _Writer:
    """One :func:`write_log` call's state: its log, the plain producer once needed, each actor's
    transaction count and the records of its open transaction."""

    log: WrittenLog
    run: str
    proxied: bool
    conf: dict[str, Any]
    plain: Producer | None = None
    txn_no: dict[str, int] = field(default_factory=dict)
    in_txn: dict[str, list[LogRecord]] = field(default_factory=dict)

    def apply(self, op: Op) -> None:
        if op.actor == PLAIN:
            self.send_plain(op)
            return
        p = self.producer(op.actor)
        if op.action == "send":
            self.send(op, p)
        elif op.actor in self.in_txn:  # an end without a transaction: nothing to end
            self.end(op, p)

    def send_plain(self, op: Op) -> None:
        log = self.log
        self.plain = plain = self.plain or _plain_producer(log.cluster, self.proxied)
        for _ in range(op.n):
            rec = LogRecord(f"plain:{len(log.records)}", PLAIN, 0, "plain")
            write_all(plain, log.topic, [rec.value.encode()], partition=log.partition)  # ClientError if not written
            log.records.append(rec)

    def producer(self, actor: str) -> TxnProducer:
        """The actor's transactional producer, created and initialised on its first op."""
        p = self.log.producers.get(actor)
        if p is None:
            tid = f"rc-{self.run}-{actor}"
            p = transactional_producer(
                self.log.cluster,
                tid,
                f"{tid}-{self.log.partition}",
                proxied=self.proxied,
                conf={**LOG_PRODUCER, **self.conf},
            )
            p.init_transactions(30)
            self.log.producers[actor] = p
        return p

    def send(self, op: Op, p: TxnProducer) -> None:
        """``op.n`` records in the actor's open transaction (its next one begins if none is open)."""
        if op.actor not in self.in_txn:
            p.begin_transaction()
            self.txn_no[op.actor] = self.txn_no.get(op.actor, 0) + 1
            self.in_txn[op.actor] = []
        for _ in range(op.n):
            n = self.txn_no[op.actor]
            rec = LogRecord(f"{op.actor}#{n}:{len(self.in_txn[op.actor])}", op.actor, n, "open")
            p.produce(self.log.topic, rec.value.encode(), partition=self.log.partition)
            p.flush(30)
            self.in_txn[op.actor].append(rec)
            self.log.records.append(rec)

    def end(self, op: Op, p: TxnProducer) -> None:
        p.commit_transaction(30) if op.action == "commit" else p.abort_transaction(30)
        wait_settled(self.log.cluster, [p.transactional_id])  # the markers are on disk before the next op writes
        for rec in self.in_txn.pop(op.actor):
            rec.fate = "committed" if op.action == "commit" else "aborted"


def write_log(
    cluster: Cluster,
    topic: str,
    partition: int,
    pattern: list[Op],
    *,
    run: str | None = None,
    proxied: bool = False,
    conf: dict[str, Any] | None = None,
) -> WrittenLog:
    """Write ``pattern`` to ``topic-partition`` (the topic must exist); offsets are read back afterwards."""
    log = WrittenLog(cluster, topic, partition, list(pattern))
    writer = _Writer(log, run or run_id(), proxied, conf or {})
    for op in pattern:
        writer.apply(op)
    log.open_actors = list(writer.in_txn)
    offsets = {v: off for _, off, v in read_values(cluster, topic, [partition], isolation="read_uncommitted")}
    for rec in log.records:
        rec.offset = offsets.get(rec.value, -1)
    return log
