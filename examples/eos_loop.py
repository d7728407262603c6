"""A consume-transform-produce loop, exactly once: each batch of inputs and its outputs in one transaction.

    python examples/eos_loop.py --input orders --output orders-upper --group orders-upper \\
        --transactional-id orders-upper-1

Per batch: begin_transaction, one produce per input (the value upper-cased), send_offsets_to_transaction
(the offsets to commit: per partition the NEXT offset to read), commit_transaction. The outputs and the
inputs' offsets commit together or not at all, so a processor killed anywhere and restarted with the same
transactional.id and group carries on from the committed offsets: a read_committed consumer of the output
reads each input's output once.

Every call's errors are sorted the way librdkafka's transactional API documents them (KafkaError flags):
retriable ones in one place (``retried``), the rest where they are handled (``process``, ``run``), and each call
has its own function saying what its errors mean:

- fatal (``err.fatal()``; ``_FENCED``: a newer instance with the same transactional.id took over): stop;
- abortable (``err.txn_requires_abort()``): abort the transaction, seek the consumer back to the committed
  offsets, redo the batch in a new transaction;
- retriable (``err.retriable()``): the SAME call again; a commit that timed out too (it may already be
  durable: retry it, never abort it);
- ``BufferError`` from produce (the local queue is full): serve delivery reports (poll), the same produce again.

With ``--history FILE`` it also records what it did, one JSON line per event (a record polled, a delivery
report, a commit, an abort, an assignment), in the format eoslab's history checker reads
(``eoslab.history``). Plain confluent-kafka otherwise: copy it into your own project.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

COURSE_CLUSTER = "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"
"""The course's brokers (eoslab's topology: broker-1..3, CLIENT listeners)."""
TIMEOUT = 10.0
"""Seconds a transactional call may take before it raises a (retriable) timeout: short enough that the loop
keeps serving its consumer's group, long enough for a coordinator's fail-over (seconds)."""

T = TypeVar("T")


def consumer_settings(bootstrap_servers: str, group: str) -> dict[str, Any]:
    """The consumer's settings, each EOS-relevant one with why it is there."""
    return {
        "bootstrap.servers": bootstrap_servers,
        "group.id": group,
        # Offsets advance only inside the transaction (send_offsets_to_transaction). An auto commit would
        # move them on a timer, outside it: a crash before the commit would then skip inputs whose outputs
        # never committed (lost), and the offsets would no longer say what the output holds.
        "enable.auto.commit": False,
        # Never process an input from an aborted transaction, nor one still open. librdkafka's default is
        # read_committed, the Java client's (and Spark's) read_uncommitted: set it, so the code says it.
        "isolation.level": "read_committed",
        "auto.offset.reset": "earliest",  # a new group starts at the first input, not at the end
        # A killed processor never leaves its group: its successor is given the partitions once this session
        # expires. The broker's minimum (group.min.session.timeout.ms), so a restart resumes quickly.
        "session.timeout.ms": 6000,
    }


def producer_settings(bootstrap_servers: str, transactional_id: str) -> dict[str, Any]:
    """The producer's settings, each EOS-relevant one with why it is there."""
    return {
        "bootstrap.servers": bootstrap_servers,
        # The same id across restarts: init_transactions() fences the previous instance (bumps the epoch) and
        # aborts the transaction it left open. Implies enable.idempotence=true and acks=all.
        "transactional.id": transactional_id,
        # An open transaction holds back every read_committed reader of the output (the LSO): the coordinator
        # aborts one left open this long. Above a batch's work, below the broker's transaction.max.timeout.ms.
        "transaction.timeout.ms": 30000,
    }


def transform(value: bytes | None) -> bytes:
    """The work on one input value: upper-case it."""
    return (value or b"").upper()


def next_offsets(records: Iterable[Any]) -> list[TopicPartition]:
    """The offsets to commit for ``records``: per partition, the last record's offset + 1. A committed offset is
    where the group starts reading, the NEXT record: the last record's own offset would redo it after a restart."""
    nxt: dict[tuple[str, int], int] = {}
    for r in records:
        key = (r.topic(), r.partition())
        nxt[key] = max(nxt.get(key, 0), r.offset() + 1)
    return [TopicPartition(t, p, o) for (t, p), o in sorted(nxt.items())]


def spans(records: Iterable[Any]) -> str:
    """What a batch holds, per partition: ``topic[partition]@first..last``."""
    seen: dict[tuple[str, int], list[int]] = {}
    for r in records:
        seen.setdefault((r.topic(), r.partition()), []).append(r.offset())
    return ", ".join(f"{t}[{p}]@{min(o)}..{max(o)}" for (t, p), o in sorted(seen.items()))


def retried(what: str, call: Callable[[], T]) -> T:
    """``call()`` until it returns; the one place a KafkaException is sorted. Retriable: the same call again.
    Fatal, abortable, or an error this loop does not know: raised, for ``process`` (abortable: abort the batch)
    and ``run`` (the rest: stop)."""
    while True:
        try:
            return call()
        except KafkaException as e:
            err: KafkaError = e.args[0]
            if err.fatal() or err.txn_requires_abort() or not err.retriable():
                raise
            print(f"  {what}: {err.name()} (retriable), the same call again", file=sys.stderr)


def begin(producer: Producer) -> None:
    retried("begin_transaction", producer.begin_transaction)


def produce(producer: Producer, topic: str, record: Message, on_delivery: Callable[[Any, Any], None]) -> None:
    """One output for ``record``. A full local queue (BufferError): serve delivery reports, the same produce again."""
    while True:
        try:
            retried(
                "produce",
                lambda: producer.produce(topic, transform(record.value()), record.key(), on_delivery=on_delivery),
            )
            producer.poll(0)  # serve delivery reports as they come
            return
        except BufferError:
            producer.poll(0.5)


def send_offsets(producer: Producer, consumer: Consumer, offsets: list[TopicPartition]) -> None:
    """The inputs' offsets into the transaction. The group metadata is fetched right before the call: a
    rebalance changes the member and generation, and the group coordinator refuses stale ones (KIP-447)."""
    retried(
        "send_offsets_to_transaction",
        lambda: producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), TIMEOUT),
    )


def commit(producer: Producer) -> None:
    """A timed-out commit is retriable: the commit may already be durable, so it is retried, never aborted."""
    retried("commit_transaction", lambda: producer.commit_transaction(TIMEOUT))


def rewind(consumer: Consumer) -> None:
    """Seek every assigned partition back to its committed offset (the start if none): the aborted batch is
    read again. Without it the consumer's position stays past inputs whose outputs were aborted."""
    assigned = consumer.assignment()
    if assigned:
        for tp in consumer.committed(assigned, TIMEOUT):
            consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))


def abort(producer: Producer, consumer: Consumer) -> None:
    """Abort the transaction (its outputs are never read by read_committed), then rewind the consumer. An abort
    that fails with anything but a retriable error stops the loop (raised)."""
    retried("abort_transaction", lambda: producer.abort_transaction(TIMEOUT))
    rewind(consumer)


class History:
    """``--history FILE``: one JSON line per event, in eoslab.history's format; one ``os.write`` per line, so a
    killed process loses at most the line it was writing. Without a file it records nothing."""

    def __init__(self, path: str | None, transactional_id: str) -> None:
        self.process, self.tid = f"eos-loop-{os.getpid()}", transactional_id
        self.fd = None if path is None else os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(self, kind: str, **fields: Any) -> None:
        if self.fd is not None:
            event = {"kind": kind, "process": self.process, "time": time.time(), **fields}
            os.write(self.fd, (json.dumps(event, sort_keys=True) + "\n").encode())

    @staticmethod
    def at(topic: str, partition: int, offset: int) -> dict[str, Any]:
        return {"topic": topic, "partition": partition, "offset": offset}

    @staticmethod
    def text(raw: bytes | None) -> str | None:
        return None if raw is None else raw.decode("utf-8", "surrogateescape")

    def polled(self, m: Any) -> None:
        self.write(
            "polled",
            at=self.at(m.topic(), m.partition(), m.offset()),
            value=self.text(m.value()),
            key=self.text(m.key()),
        )

    def delivery(self, source: Any, txn: int) -> Callable[[Any, Any], None]:
        """An ``on_delivery`` callback recording where the leader put the output of ``source`` (or the error)."""
        src = self.at(source.topic(), source.partition(), source.offset())

        def report(err: Any, msg: Any) -> None:
            self.write(
                "sent",
                topic=msg.topic(),
                partition=msg.partition(),
                offset=None if err is not None else msg.offset(),
                value=self.text(msg.value()),
                key=self.text(msg.key()),
                source=src,
                txn=txn,
                transactional_id=self.tid,
                error=None if err is None else err.name(),
            )

        return report

    def committed(self, txn: int, offsets: list[TopicPartition]) -> None:
        self.write(
            "committed",
            txn=txn,
            transactional_id=self.tid,
            offsets=[self.at(tp.topic, tp.partition, tp.offset) for tp in offsets],
        )

    def aborted(self, txn: int, reason: str) -> None:
        self.write("aborted", txn=txn, reason=reason, transactional_id=self.tid)

    def assigned(self, partitions: list[TopicPartition], committed: list[TopicPartition]) -> None:
        known = [self.at(tp.topic, tp.partition, tp.offset) for tp in committed if tp.offset >= 0]
        self.write("assigned", partitions=[[tp.topic, tp.partition] for tp in partitions], offsets=known)


def process(
    consumer: Consumer,
    producer: Producer,
    records: list[Message],
    output: str,
    history: History,
    txn: int,
    work_s: float = 0.0,
) -> bool:
    """One batch in one transaction: True when it committed; False when it aborted (the consumer rewound)."""
    offsets = next_offsets(records)
    span = spans(records)
    try:
        begin(producer)
        for r in records:
            history.polled(r)
            time.sleep(work_s)  # --work-ms: a slower transform
            produce(producer, output, r, history.delivery(r, txn))
        send_offsets(producer, consumer, offsets)
        commit(producer)
    except KafkaException as e:
        err = e.args[0]
        if err.fatal() or not err.txn_requires_abort():
            raise  # fatal (fenced: a newer instance owns the transactional.id) or unknown: run() stops
        abort(producer, consumer)
        history.aborted(txn, f"{err.name()}: {err.str()}")
        print(f"txn {txn}: {len(records)} records ({span}) ABORTED ({err.name()}), consumer rewound")
        return False
    producer.poll(0)  # the delivery reports the commit's flush left queued
    history.committed(txn, offsets)
    committed = ", ".join(f"{tp.topic}[{tp.partition}]={tp.offset}" for tp in offsets)
    print(f"txn {txn}: {len(records)} records ({span}) committed with offsets {committed}")
    return True


@dataclass
class Run:
    """Where the loop is: asked to stop (SIGTERM, ^C), first given partitions, last given input; outcomes."""

    stop: bool = False
    assigned_at: float | None = None
    last_input: float = 0.0
    committed: int = 0
    aborted: int = 0

    def idle_for(self, seconds: float | None) -> bool:
        """No input for ``seconds`` since the group first gave it partitions (``None``: never idle)."""
        if seconds is None or self.assigned_at is None:
            return False
        return time.monotonic() - max(self.last_input, self.assigned_at) > seconds


def run(args: argparse.Namespace) -> int:
    history = History(args.history, args.transactional_id)
    consumer = Consumer(consumer_settings(args.bootstrap_servers, args.group))
    producer = Producer(producer_settings(args.bootstrap_servers, args.transactional_id))
    state = Run()

    def on_assign(c: Consumer, partitions: list[TopicPartition]) -> None:
        history.assigned(partitions, c.committed(partitions, TIMEOUT) if partitions else [])
        state.assigned_at = state.assigned_at or time.monotonic()

    def on_signal(signum: int, frame: Any) -> None:  # finish the current batch, then stop
        state.stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    consumer.subscribe([args.input], on_assign=on_assign)
    retried("init_transactions", lambda: producer.init_transactions(TIMEOUT))  # fences an older instance
    print(f"{history.process}: transactional.id {args.transactional_id!r} ready; reading {args.input}")
    try:
        while not state.stop and not state.idle_for(args.idle):
            records = [m for m in consumer.consume(args.batch, 0.5) if m.error() is None]
            if not records:
                continue
            state.last_input = time.monotonic()
            txn = state.committed + state.aborted + 1
            if process(consumer, producer, records, args.output, history, txn, args.work_ms / 1000):
                state.committed += 1
            else:
                state.aborted += 1
    except KafkaException as e:  # fatal, or an error the loop does not know: stop, a restart carries on
        err = e.args[0]
        print(f"{history.process}: stopping on {err.name()} (fatal={err.fatal()}): {err.str()}", file=sys.stderr)
        return 1
    consumer.close()
    print(f"{history.process}: {state.committed} transactions committed, {state.aborted} aborted")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap-servers", default=COURSE_CLUSTER, help="default: the course cluster, %(default)s")
    ap.add_argument("--input", required=True, help="the topic to read")
    ap.add_argument("--output", required=True, help="the topic to write")
    ap.add_argument("--group", required=True, help="the consumer group (the same across restarts)")
    ap.add_argument("--transactional-id", required=True, help="the producer's id (the same across restarts)")
    ap.add_argument("--batch", type=int, default=10, help="records per transaction, at most (default: %(default)s)")
    ap.add_argument("--idle", type=float, help="stop after this many seconds without input (default: run until ^C)")
    ap.add_argument("--work-ms", type=float, default=0, help="pretend each record takes this long to transform")
    ap.add_argument("--history", help="record every event to this file (JSON lines, eoslab.history's format)")
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
