"""Three things that happen to transactions in production, made to happen on the cluster.

- a zombie: a producer frozen mid-transaction while a successor with the same
  ``transactional.id`` starts (:func:`fence_zombie`);
- a hung transaction: a producer that never ends its transaction
  (:func:`hung_transaction`);
- a coordinator failover: the transaction coordinator's broker dies
  mid-transaction (:func:`coordinator_failover`).

Each returns a result whose fields are the evidence: the client's answers, the
step (trace, ``__transaction_state`` records, disk) and timings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._heal import heal as heal_cluster
from eoslab._wait import wait_until
from eoslab.demos import TXN_PRODUCER, coordinator_state
from eoslab.faults import ZombieProducer
from eoslab.m03_transactions._step import Step

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.demos import TxnProducer
    from eoslab.m03_transactions._lesson import TransactionLesson

ABORT_WAIT = 60.0  # a few-second transaction timeout + the coordinator's 1 s scan, with room for a busy machine


def kafka_error(exc: BaseException) -> dict[str, Any]:
    """What a ``KafkaException`` says, as the fields a handler decides on."""
    err = exc.args[0] if exc.args else None
    if err is None or not hasattr(err, "code"):
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {
        "error": err.name(),
        "fatal": err.fatal(),
        "retriable": err.retriable(),
        "txn_requires_abort": err.txn_requires_abort(),
        "message": err.str(),
    }


def attempt_waiting(fn: Any, timeout: float, what: str) -> dict[str, Any]:
    """:func:`attempt` of ``fn(timeout)`` for a call that blocks for seconds (a commit that waits for a
    new coordinator): it runs in a thread while :func:`wait_until` shows its bar."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(attempt, fn, timeout)
        # librdkafka returns (an error at the latest) when its own timeout ends: a few seconds' margin.
        wait_until(future.done, timeout=timeout + 10, interval=0.1, what=what)
        return future.result()


def attempt(fn: Any, *args: Any) -> dict[str, Any]:
    """Call ``fn`` and return ``{"ok": True}`` or the error's fields (a lesson shows both)."""
    from confluent_kafka import KafkaException

    try:
        fn(*args)
        return {"ok": True}
    except KafkaException as exc:
        return {"ok": False, **kafka_error(exc)}


@dataclass
class Fenced:
    """What fencing a zombie left: its answers after it was thawed, and the step's evidence."""

    step: Step
    zombie_client: str
    successor: Any  # the successor producer (initialised): the lesson goes on with it
    zombie: dict[str, dict[str, Any]] = field(default_factory=dict)  # call -> answer
    successor_init_s: float = 0.0

    def answers(self) -> pd.DataFrame:
        """The zombie's calls and what librdkafka answered: ok, error code, fatal, abortable."""
        import pandas as pd

        rows = [
            {
                "call": call,
                "ok": a.get("ok"),
                "error": a.get("code", ""),
                "fatal": a.get("fatal", ""),
                "txn_requires_abort": a.get("abortable", ""),
                "message": a.get("error", ""),
            }
            for call, a in self.zombie.items()
        ]
        return pd.DataFrame(rows).set_index("call")

    def init_answers(self) -> list[tuple[str, str, int, int]]:
        """(client, error, producer id, epoch) of every InitProducerId answer in the step."""
        return self.step.init_answers()


def fence_zombie(lesson: TransactionLesson, partition: int = 0) -> Fenced:
    """A producer in a child process writes one record in a transaction and is frozen (SIGSTOP); a successor
    with the SAME transactional id initialises; the zombie is thawed and tries to go on.

    The record is flushed before the freeze: with ``begin_transaction()`` alone
    the coordinator has heard nothing (still Empty): the successor's InitProducerId would still bump the
    epoch and fence the zombie, but there would be no open transaction to abort.
    """
    tid = lesson.transactional_id
    zid, sid = lesson.client("zombie"), lesson.client("successor")
    conf = {
        **TXN_PRODUCER,
        "bootstrap.servers": lesson.cluster.bootstrap_servers(proxied=True),
        "transactional.id": tid,
        "client.id": zid,
    }
    out: dict[str, dict[str, Any]] = {}
    with lesson.step("fencing a zombie", clients=[zid, sid]) as step, ZombieProducer(conf, name="zombie") as zombie:
        first: list[tuple[str, dict[str, Any]]] = [
            ("init_transactions", {}),
            ("begin", {}),
            ("produce", {"topic": lesson.topic, "value": "from the zombie", "partition": partition}),
            ("flush", {}),
        ]
        for op, args in first:
            out[f"before: {op}"] = zombie.call(op, **args)
        zombie.freeze()
        successor = lesson.producer("successor")
        t0 = time.monotonic()
        successor.init_transactions(60)
        took = time.monotonic() - t0
        zombie.thaw()
        out["after: produce"] = zombie.call("produce", topic=lesson.topic, value="zombie, thawed", partition=partition)
        out["after: commit"] = zombie.call("commit")
        out["after: abort"] = zombie.call("abort")
        out["after: produce again"] = zombie.call("produce", topic=lesson.topic, value="again", partition=partition)
    return Fenced(step, zid, successor, {k: _plain(v) for k, v in out.items()}, round(took, 2))


def _plain(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "delivered" or v}


@dataclass
class Hung:
    """A transaction the coordinator aborted on its own, and what the producer learnt afterwards."""

    step: Step
    transactional_id: str
    timeout_ms: int
    aborted_after_s: float
    next_commit: dict[str, Any]
    next_abort: dict[str, Any]


def hung_transaction(lesson: TransactionLesson, timeout_ms: int = 3000, partition: int = 0) -> Hung:
    """A producer with ``transaction.timeout.ms=timeout_ms`` opens a transaction and goes quiet.

    The coordinator aborts it at its next scan after the timeout
    (``transaction.abort.timed.out.transaction.cleanup.interval.ms``, 1 s in
    this cluster's topology) and bumps the epoch; the producer learns it on its
    next request.
    """
    tid = f"{lesson.transactional_id}-hung"
    conf = {"transaction.timeout.ms": timeout_ms, "message.timeout.ms": timeout_ms, "socket.timeout.ms": timeout_ms}
    p = lesson.producer("hung", transactional_id=tid, conf=conf)
    with lesson.step("a hung transaction", clients=[p.client_id]) as step:
        p.init_transactions(30)
        p.begin_transaction()
        p.produce(lesson.topic, b"never committed", partition=partition)
        p.flush(30)
        t0 = time.monotonic()
        wait_until(
            lambda: coordinator_state(lesson.cluster, tid) == "CompleteAbort",
            timeout=ABORT_WAIT,
            interval=0.1,
            what=f"the coordinator to abort {tid!r} after its {timeout_ms} ms timeout",
        )
        aborted_after = time.monotonic() - t0
        p.produce(lesson.topic, b"too late", partition=partition)
        commit = attempt(p.commit_transaction, 30)
        abort = attempt(p.abort_transaction, 30)
    return Hung(step, tid, timeout_ms, round(aborted_after, 1), commit, abort)


@dataclass
class Failover:
    """A transaction whose coordinator died between its sends and its commit."""

    step: Step
    old_coordinator: int
    new_coordinator: int
    commit: dict[str, Any]
    commit_s: float
    states: Any = None  # the step's __transaction_state records, read from the NEW coordinator before the heal
    disk: Any = None
    heal_s: float = 0.0


def coordinator_failover(lesson: TransactionLesson, producer: TxnProducer, heal: bool = True) -> Failover:
    """Open a transaction (a record to A and B), kill its coordinator's broker, commit at once.

    The commit waits: the dead broker's session must expire
    (``broker.session.timeout.ms``, 5 s here) before the controller gives its
    ``__transaction_state`` partition a new leader, which loads the partition
    (the Ongoing record is in its replica) and becomes the coordinator; the
    producer finds it and its EndTxn completes the transaction. ``heal``
    restarts the broker and moves leadership back.
    """
    cluster = lesson.cluster
    part = ins.coordinator_partition(producer.transactional_id)
    old = cluster.leader("__transaction_state", part)
    with lesson.step("coordinator failover", clients=[producer.client_id]) as step:
        producer.begin_transaction()
        producer.produce(lesson.topic, b"survives failover A", partition=0)
        producer.produce(lesson.topic, b"survives failover B", partition=1)
        producer.flush(30)
        cluster.kill(f"broker-{old}")
        t0 = time.monotonic()
        commit = attempt_waiting(producer.commit_transaction, 60, "the commit to reach a new coordinator")
        took = time.monotonic() - t0
    new = cluster.wait_for_new_leader("__transaction_state", part, old_leader=old)
    result = Failover(step, old, new, commit, round(took, 1))
    # Read while the new coordinator leads: the dead broker's copy stopped at the kill.
    result.states, result.disk = step.states(), step.disk()
    if heal:
        t1 = time.monotonic()
        heal_cluster(cluster)
        result.heal_s = round(time.monotonic() - t1, 1)
    return result
