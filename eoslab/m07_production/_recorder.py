"""The recorder: confluent-kafka's ``Consumer`` and ``Producer``, each call written to a history as it returns.

Module 07's programs are plain confluent-kafka code (``from confluent_kafka import Consumer, Producer``),
the code a learner takes home. The child that runs one (:mod:`eoslab.m07_production.child`) puts these
two subclasses in ``confluent_kafka``'s place before it imports the program, as a tracing library
instruments a client: the program's code is untouched, and the history (:mod:`eoslab.history`) holds what
its clients really did, for the checker:

- every record a ``poll``/``consume`` returned, and every error a poll returned (``_MAX_POLL_EXCEEDED``:
  the consumer left its group);
- every delivery report, with the transaction it belonged to (counted from ``begin_transaction``);
- every ``commit_transaction`` with the offsets given to ``send_offsets_to_transaction`` in it, and every
  ``abort_transaction`` with the error that preceded it;
- every offset commit outside a transaction: a ``commit()`` call, and the consumer's own auto commits
  (``enable.auto.commit``, librdkafka's default), which librdkafka reports to ``on_commit``;
- every Kafka error a call raised, with its class (fatal, abortable).

A fault point (the child's ``--die-at after-offsets:2``: right after the 2nd ``send_offsets_to_transaction``
returned; ``after-commit:N``: after the Nth ``commit_transaction``) makes the process SIGKILL itself there.
With auto commit on, the kill at ``after-offsets`` first waits (at most ``auto.commit.interval.ms`` and a
margin) until the group coordinator holds an auto-committed offset past the batch: the crash lands after the
consumer's timer fired, every time (in production it lands there by chance).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from eoslab.errors import ClientError
from eoslab.history import HistoryWriter

AUTO_COMMIT_MARGIN = 15.0
"""Seconds past ``auto.commit.interval.ms`` the ``after-offsets`` kill waits at most for the auto commit to land: it
waits for the commit itself (an OffsetCommit round trip after the timer, milliseconds), so the bound only matters
on a machine too loaded to commit at all, or for a program whose timer is longer than the run."""


class ProgramError(ClientError):
    """A program that cannot be run as written (not a function, a name it cannot have in another process,
    a fault point that does not exist)."""


_STATE: dict[str, Any] = {"history": None, "consumers": [], "producers": [], "die_at": None}


def _h() -> HistoryWriter:
    h = _STATE["history"]
    assert h is not None, "install() the recorder before the program builds its clients"
    return h  # type: ignore[no-any-return]


def _error_of(exc: BaseException) -> Any:
    return exc.args[0] if isinstance(exc, KafkaException) and exc.args else None


def _truthy(value: Any) -> bool:
    return str(value).lower() in ("true", "1") if not isinstance(value, bool) else value


class RecordingConsumer(confluent_kafka.Consumer):
    """A ``Consumer`` whose polls and commits go to the history."""

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        config = dict(config)
        self.group_id = str(config.get("group.id", ""))
        self.auto_commit = _truthy(config.get("enable.auto.commit", True))  # librdkafka's default: true
        self.auto_commit_interval = int(config.get("auto.commit.interval.ms", 5000)) / 1000
        self.bootstrap = str(config.get("bootstrap.servers", ""))
        theirs = config.get("on_commit")

        def on_commit(err: Any, partitions: list[TopicPartition]) -> None:
            if err is None and self.auto_commit:
                _h().committed(None, [tp for tp in partitions if tp.offset >= 0], via="auto commit")
            if theirs is not None:
                theirs(err, partitions)

        config["on_commit"] = on_commit
        super().__init__(config, **kwargs)
        self.stored: dict[tuple[str, int], int] = {}
        _STATE["consumers"].append(self)

    def _seen(self, msgs: list[Any]) -> list[Any]:
        for m in msgs:
            err = m.error()
            if err is None:
                _h().polled(m)
                # what auto commit commits: the offset after the last record handed out (enable.auto.offset.store)
                self.stored[(m.topic(), m.partition())] = m.offset() + 1
            elif err.code() != KafkaError._PARTITION_EOF:
                _h().failed("poll", err)
        return msgs

    def poll(self, *args: Any, **kwargs: Any) -> Any:
        msg = super().poll(*args, **kwargs)
        if msg is not None:
            self._seen([msg])
        return msg

    def consume(self, *args: Any, **kwargs: Any) -> Any:
        return self._seen(super().consume(*args, **kwargs))

    def subscribe(self, topics: list[str], *args: Any, **kwargs: Any) -> Any:
        theirs = kwargs.pop("on_assign", None)

        def on_assign(consumer: Any, partitions: list[TopicPartition]) -> None:
            _h().assigned(partitions)
            if theirs is not None:
                theirs(consumer, partitions)

        kwargs["on_assign"] = on_assign
        return super().subscribe(topics, *args, **kwargs)

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        try:
            out = super().commit(*args, **kwargs)
        except KafkaException as e:
            _h().failed("commit", _error_of(e))
            raise
        if not self.auto_commit and out is not None:  # synchronous: the offsets committed (on_commit sees async)
            _h().committed(None, [tp for tp in out if tp.offset >= 0], via="commit()")
        elif not self.auto_commit:
            offsets = kwargs.get("offsets") or self.position(self.assignment())
            _h().committed(None, [tp for tp in offsets if tp.offset >= 0], via="commit()")
        return out


class RecordingProducer(confluent_kafka.Producer):
    """A ``Producer`` whose deliveries and transactional calls go to the history."""

    def __init__(self, config: dict[str, Any], **kwargs: Any) -> None:
        self.tid: str | None = config.get("transactional.id")
        super().__init__(config, **kwargs)
        self.txn, self.in_txn, self.offsets_calls, self.commits = 0, False, 0, 0
        self.offsets: dict[tuple[str, int], int] = {}
        self.last_error = ""
        _STATE["producers"].append(self)

    def _call(self, name: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except KafkaException as e:
            err = _error_of(e)
            if err is not None:
                self.last_error = f"{err.name()}: {err.str()}"
                _h().failed(name, err, transactional_id=self.tid)
                if err.code() == KafkaError._FATAL and self.tid:
                    self._name_fatal()
            raise

    def _name_fatal(self) -> None:
        """After a fatal error librdkafka's produce() raises only ``_FATAL``; a transactional call raises the
        fatal error itself (``_FENCED``...), and can change nothing in that state: ask, and record its name."""
        try:
            super().abort_transaction(0.1)
        except KafkaException as e:
            err = _error_of(e)
            if err is not None and err.code() != KafkaError._FATAL:
                _h().failed("produce", err, transactional_id=self.tid)

    def produce(self, topic: str, *args: Any, **kwargs: Any) -> Any:
        txn = self.txn if self.in_txn else None
        theirs = kwargs.pop("on_delivery", None) or kwargs.pop("callback", None)
        ids = {"transactional_id": self.tid} if txn is not None else {}

        def report(err: Any, msg: Any) -> None:
            _h().delivered(err, msg, source=None, txn=txn, **ids)
            if theirs is not None:
                theirs(err, msg)

        kwargs["on_delivery"] = report
        return self._call("produce", lambda: super(RecordingProducer, self).produce(topic, *args, **kwargs))

    def init_transactions(self, *args: Any) -> None:
        self._call("init_transactions", lambda: super(RecordingProducer, self).init_transactions(*args))

    def begin_transaction(self) -> None:
        self._call("begin_transaction", super().begin_transaction)
        self.txn += 1
        self.in_txn, self.offsets, self.last_error = True, {}, ""

    def send_offsets_to_transaction(self, positions: list[TopicPartition], metadata: Any, *args: Any) -> None:
        self._call(
            "send_offsets_to_transaction",
            lambda: super(RecordingProducer, self).send_offsets_to_transaction(positions, metadata, *args),
        )
        self.offsets.update({(tp.topic, tp.partition): tp.offset for tp in positions if tp.offset >= 0})
        self.offsets_calls += 1
        _die_if("after-offsets", self.offsets_calls, self)

    def commit_transaction(self, *args: Any) -> None:
        self._call("commit_transaction", lambda: super(RecordingProducer, self).commit_transaction(*args))
        if self.in_txn:
            offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(self.offsets.items())]
            _h().committed(self.txn, offsets, transactional_id=self.tid)
        self.in_txn = False
        self.commits += 1
        _die_if("after-commit", self.commits, self)

    def abort_transaction(self, *args: Any) -> None:
        self._call("abort_transaction", lambda: super(RecordingProducer, self).abort_transaction(*args))
        if self.in_txn:
            _h().aborted(self.txn, self.last_error or "aborted by the program", transactional_id=self.tid)
        self.in_txn = False


def _group_committed(admin: Any, consumer: RecordingConsumer, offsets: dict[tuple[str, int], int]) -> list[Any]:
    """The group's committed offsets of these partitions as OffsetFetch answers without RequireStable: what
    the group coordinator holds outside any open transaction."""
    from confluent_kafka import ConsumerGroupTopicPartitions

    tps = [TopicPartition(t, p) for t, p in offsets]
    req = [ConsumerGroupTopicPartitions(consumer.group_id, tps)]
    fut = admin.list_consumer_group_offsets(req, require_stable=False)[consumer.group_id]
    return list(fut.result(timeout=10).topic_partitions or [])


def _wait_for_auto_commit(producer: RecordingProducer) -> None:
    """With auto commit on, wait until the group holds an offset past the batch committed by the timer, and
    record it (its on_commit report would come only with the next poll, which the kill prevents)."""
    from confluent_kafka.admin import AdminClient

    for consumer in _STATE["consumers"]:
        if not consumer.auto_commit or not consumer.group_id:
            continue
        admin = AdminClient({"bootstrap.servers": consumer.bootstrap})
        # the batch's partitions, at the offset the timer commits for each (the position may be past a marker)
        target = {tp: consumer.stored[tp] for tp in producer.offsets if tp in consumer.stored}
        deadline = time.monotonic() + consumer.auto_commit_interval + AUTO_COMMIT_MARGIN
        while target and time.monotonic() < deadline:
            held = _group_committed(admin, consumer, target)
            if held and all(tp.offset >= target[(tp.topic, tp.partition)] for tp in held):
                _h().committed(None, held, via="auto commit")
                return
            time.sleep(0.2)


def _die_if(point: str, count: int, producer: RecordingProducer) -> None:
    spec = _STATE["die_at"]
    if spec != (point, count):
        return
    if point == "after-offsets":
        _wait_for_auto_commit(producer)
    os.kill(os.getpid(), signal.SIGKILL)


def parse_die_at(spec: str | None) -> tuple[str, int] | None:
    """``"after-offsets:2"`` -> ``("after-offsets", 2)``; ``None`` or ``""`` -> ``None``."""
    if not spec:
        return None
    point, _, n = spec.partition(":")
    if point not in ("after-offsets", "after-commit") or not n.isdigit():
        raise ProgramError(f"die_at={spec!r}: give 'after-offsets:N' or 'after-commit:N'.")
    return point, int(n)


def install(history: HistoryWriter, die_at: str | None = None) -> None:
    """Put the recording clients in ``confluent_kafka``'s place (before the program imports them)."""
    _STATE.update(history=history, consumers=[], producers=[], die_at=parse_die_at(die_at))
    confluent_kafka.Consumer = RecordingConsumer  # type: ignore[misc,assignment]
    confluent_kafka.Producer = RecordingProducer  # type: ignore[misc,assignment]


def abort_open(timeout: float = 5.0) -> None:
    """Abort every transaction the program left open (it was told to stop mid-transaction): a graceful
    shutdown's hook, so that readers need not wait for the transaction timeout."""
    for p in _STATE["producers"]:
        if p.in_txn:
            try:
                p.abort_transaction(timeout)
            except KafkaException:
                pass  # fenced or fatal: the coordinator aborts it at its timeout
