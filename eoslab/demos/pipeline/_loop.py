"""A learner's processor loop, run as module 05's pipeline process (``PipelineProcess(..., loop=...)``).

The learner writes the program of ``examples/eos_loop.py``: the clients' settings, the offsets to commit, the
transaction and its error handling, ending in ONE function, ``def run(pipe): ...``. The child process
(:mod:`eoslab.demos.pipeline.child`) calls it with a :class:`Pipe`, which says where to read and write and makes
the clients from the learner's own settings. What the checker needs is recorded by the clients the pipe makes,
not by the learner's code, so a loop cannot write a history that did not happen:

- ``pipe.consumer(settings)`` is a confluent-kafka ``Consumer`` of those settings; every record its ``consume`` or
  ``poll`` returns is recorded, and so is every assignment (``subscribe``) and plain ``commit()``;
- ``pipe.producer(settings)`` is a ``Producer`` of those settings; every delivery report of its ``produce`` is
  recorded (where the output landed, which transaction, which input it was made from), and its transactional
  calls as they return (``commit_transaction`` -> a commit of the offsets given to
  ``send_offsets_to_transaction`` in that transaction, ``abort_transaction`` -> an abort, with the error that
  caused it).

The kit adds to the learner's settings only what its faults need: ``client.id`` (what the fault proxy's rules
match), the consumer's ``session.timeout.ms``/``heartbeat.interval.ms`` (a killed processor's partitions move in
seconds), and the producer's ``transaction.timeout.ms``/``message.timeout.ms`` when a cell sets them. The settings
the learner gave are written beside the history (``<history>.settings.json``), so a grader's hint can name them.

A fenced or fatal error raised by any producer call is also written to the process's stderr as one
``pipe-event fenced <time> <error>`` line (:data:`FENCED_EVENT`), so a grader can tell what a
process did after it was fenced.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from eoslab._timeouts import CLIENT_CALL
from eoslab.demos.pipeline._loopfile import LOOP_HEADER, load_loop, write_loop
from eoslab.demos.pipeline._parts import FENCED, abort_reason, origin_of, output_value
from eoslab.history import HistoryWriter, Position

__all__ = ["CALL_TIMEOUT", "FENCED_EVENT", "LOOP_HEADER", "Pipe", "load_loop", "write_loop"]


class Processor(Protocol):
    """What a :class:`Pipe` needs of the process running it (``_child.Processor``)."""

    args: Any
    process: str
    kit_conf: dict[str, Any]
    """What the kit adds to both clients' settings: ``client.id`` (what proxy rules match), ``debug`` if asked."""
    h: HistoryWriter
    stopping: bool
    batch: int
    die_at: tuple[str, int] | None
    stall_at: tuple[str, int] | None
    pause_at: tuple[str, int] | None

    def die_if(self, point: str) -> None: ...


CALL_TIMEOUT = 5.0
"""``send_offsets_to_transaction`` and ``commit_transaction`` give up after this many seconds (a
larger timeout is cut to it): a processor must keep serving its consumer and notice SIGTERM, and the
course's faults (a lost EndTxn response, a coordinator down) last longer, so a loop meets the
timeout and must decide what to do with it (retry the same call). librdkafka resends a request whose
response never came after socket.timeout.ms, derived from transaction.timeout.ms (20 s) here."""

FENCED_EVENT = "pipe-event fenced"
"""The start of the stderr line a pipe writes when a producer call raised a fenced or fatal error."""

SESSION = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}
"""The consumer settings the kit sets: a SIGKILLed processor never leaves its group, and its successor is given
the partitions once this session expires (the broker's minimum, group.min.session.timeout.ms)."""
AUTO_COMMIT_MARGIN = 3.0
"""Seconds past ``auto.commit.interval.ms`` that a fault waits for the consumer's own auto commit to cover the
open batch's records (a commit every interval, on librdkafka's thread): room for a busy machine."""


def _truthy(value: Any) -> bool:
    return str(value).lower() in ("true", "1")


def _kafka_error(exc: BaseException) -> Any:
    return exc.args[0] if isinstance(exc, KafkaException) and exc.args else None


class RecordingConsumer:
    """The learner's ``Consumer``: what its polls return, its assignments and its plain commits are recorded.

    Every other attribute (``seek``, ``committed``, ``assignment``, ``consumer_group_metadata``, ``close``) is the
    consumer's own."""

    def __init__(self, pipe: Pipe, settings: dict[str, Any]) -> None:
        self._pipe, self.settings = pipe, settings
        self._consumer = Consumer({**settings, **pipe._kit_settings(), **SESSION})
        self.polled: dict[tuple[str, int], int] = {}
        """The last offset each partition's polls returned since the last transaction ended (the open one's)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._consumer, name)

    @property
    def auto_commit(self) -> bool:
        """The consumer commits on its own timer (librdkafka's default when ``enable.auto.commit`` is not set)."""
        return _truthy(self.settings.get("enable.auto.commit", True))

    def subscribe(self, topics: list[str], on_assign: Callable[..., Any] | None = None, **kwargs: Any) -> None:
        def assigned(consumer: Any, partitions: list[TopicPartition]) -> None:
            committed = consumer.committed(partitions, timeout=CLIENT_CALL) if partitions else []
            self._pipe._proc.h.assigned(partitions, committed)
            if on_assign is not None:
                on_assign(consumer, partitions)

        self._consumer.subscribe(topics, on_assign=assigned, **kwargs)

    def _record(self, msg: Any) -> None:
        if msg is not None and msg.error() is None:
            self._pipe._proc.h.polled(msg)
            self.polled[(msg.topic(), msg.partition())] = msg.offset()

    def consume(self, *args: Any, **kwargs: Any) -> list[Any]:
        msgs: list[Any] = self._consumer.consume(*args, **kwargs)
        for m in msgs:
            self._record(m)
        return msgs

    def poll(self, *args: Any, **kwargs: Any) -> Any:
        msg = self._consumer.poll(*args, **kwargs)
        self._record(msg)
        return msg

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        out = self._consumer.commit(*args, **kwargs)
        offsets = kwargs.get("offsets") or (args[1] if len(args) > 1 else None)
        message = kwargs.get("message") or (args[0] if args else None)
        if offsets is None and message is not None:
            offsets = [TopicPartition(message.topic(), message.partition(), message.offset() + 1)]
        if offsets is None:  # the consumer's positions: what it committed
            offsets = self._consumer.position(self._consumer.assignment())
        self._pipe._proc.h.committed(None, [tp for tp in offsets if tp.offset >= 0])
        return out

    def wait_auto_commit(self) -> None:
        """Until the group's committed offsets cover what this transaction polled (the consumer's auto commit
        fired), at most one auto-commit interval and a margin: a fault that cuts the transaction then finds
        those offsets committed outside it, as it would whenever the interval ends inside a transaction."""
        want = [TopicPartition(t, p, o + 1) for (t, p), o in self.polled.items()]
        interval = float(self.settings.get("auto.commit.interval.ms", 5000)) / 1000
        deadline = time.monotonic() + interval + AUTO_COMMIT_MARGIN
        while want and time.monotonic() < deadline:
            got = {(tp.topic, tp.partition): tp.offset for tp in self._consumer.committed(want, timeout=CLIENT_CALL)}
            if all(got.get((tp.topic, tp.partition), -1) >= tp.offset for tp in want):
                return
            time.sleep(0.2)


class TxnProducer:
    """The learner's ``Producer``: its delivery reports and transactional calls are recorded.

    Every other attribute (``poll``, ``flush``, ``len()``) is the producer's own."""

    def __init__(self, pipe: Pipe, settings: dict[str, Any]) -> None:
        self._pipe, self.settings = pipe, settings
        self._producer = Producer({**settings, **pipe._kit_settings(), **pipe._producer_timeouts()})
        self.transactional_id: str | None = settings.get("transactional.id")
        self.txn = 0
        """Transactions begun so far by this producer's process (the current one's number)."""
        self._in_txn = False
        self._ended = False  # the current transaction reached send_offsets or commit: its outputs are all sent
        self._txn_offsets: dict[tuple[str, int], int] = {}
        self._last_error = ""
        self._cause = ""  # the transaction's first failed delivery: what made it abortable

    def __getattr__(self, name: str) -> Any:
        return getattr(self._producer, name)

    def __len__(self) -> int:
        return len(self._producer)

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except KafkaException as e:
            err = _kafka_error(e)
            if err is not None:
                self._last_error = f"{err.name()}: {err.str()}"
                if err.fatal() or err.name() in FENCED:
                    print(f"{FENCED_EVENT} {time.time():.3f} {self._last_error}", file=sys.stderr, flush=True)
            raise

    def produce(
        self, topic: str, value: Any = None, key: Any = None, partition: int = -1,
        on_delivery: Callable[[Any, Any], None] | None = None, **kwargs: Any,
    ) -> None:  # fmt: skip
        theirs = on_delivery or kwargs.pop("callback", None)
        raw = value.encode() if isinstance(value, str) else value
        source: Position | None = origin_of(None if raw is None else raw.decode("utf-8", "replace"))
        txn = self.txn if self._in_txn else None
        ids = {"transactional_id": self.transactional_id} if txn is not None else {}

        def report(err: Any, msg: Any) -> None:
            if err is not None and not self._cause:
                self._cause = f"{err.name()}: {err.str()}"
            self._pipe._proc.h.delivered(err, msg, source=source, txn=txn, **ids)
            if theirs is not None:
                theirs(err, msg)

        self._call(lambda: self._producer.produce(topic, value, key, partition, on_delivery=report, **kwargs))

    def init_transactions(self, timeout: float | None = None) -> None:
        self._call(lambda: self._producer.init_transactions(*(() if timeout is None else (timeout,))))

    def begin_transaction(self) -> None:
        self._call(self._producer.begin_transaction)
        self._pipe._proc.batch += 1  # the hooks count transactions (``after-produce:2``: the second one)
        self.txn += 1
        self._in_txn, self._ended = True, False
        self._txn_offsets, self._last_error, self._cause = {}, "", ""

    def _outputs_sent(self) -> None:
        """The first of send_offsets/commit in a transaction: its outputs are all produced ("after-produce")."""
        if self._in_txn and not self._ended:
            self._ended = True
            self._pipe._hook("after-produce")

    def send_offsets_to_transaction(
        self, positions: list[TopicPartition], group_metadata: Any, timeout: float | None = None
    ) -> None:
        self._outputs_sent()
        t = CALL_TIMEOUT if timeout is None or timeout < 0 else min(timeout, CALL_TIMEOUT)
        self._call(lambda: self._producer.send_offsets_to_transaction(positions, group_metadata, t))
        self._txn_offsets.update({(tp.topic, tp.partition): tp.offset for tp in positions})
        self._pipe._hook("after-offsets")

    def commit_transaction(self, timeout: float | None = None) -> None:
        self._outputs_sent()
        t = CALL_TIMEOUT if timeout is None or timeout < 0 else min(timeout, CALL_TIMEOUT)
        self._call(lambda: self._producer.commit_transaction(t))
        if self._in_txn:
            offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(self._txn_offsets.items())]
            self._pipe._proc.h.committed(self.txn, offsets, transactional_id=self.transactional_id)
        self._in_txn = False
        self._pipe._txn_ended()
        self._pipe._hook("after-commit")

    def abort_transaction(self, timeout: float | None = None) -> None:
        self._call(lambda: self._producer.abort_transaction(*(() if timeout is None else (timeout,))))
        if self._in_txn:
            reason = abort_reason(self._last_error or "aborted by the processor", self._cause)
            self._pipe._proc.h.aborted(self.txn, reason, transactional_id=self.transactional_id)
        self._in_txn = False
        self._pipe._txn_ended()


class Pipe:
    """What a learner's loop gets: where to read and write, clients made from the learner's settings, the transform.

    ``bootstrap_servers``, ``input``, ``output``, ``group``, ``transactional_id``: the names to use;
    ``consumer(settings)`` / ``producer(settings)``: a confluent-kafka Consumer / Producer of those settings
    (recorded for the checker); ``output_value(record)``: the output to produce for an input record (its value
    upper-cased, naming the input it was made from); ``stopping`` turns true on SIGTERM."""

    def __init__(self, processor: Processor) -> None:
        self._proc = processor
        args = processor.args
        self.bootstrap_servers: str = args.bootstrap
        self.input: str = args.input
        self.output: str = args.output
        self.group: str = args.group
        self.transactional_id: str = args.transactional_id
        self._consumer: RecordingConsumer | None = None
        self._producers: list[TxnProducer] = []
        self._seq = 0

    @property
    def stopping(self) -> bool:
        return self._proc.stopping

    def consumer(self, settings: dict[str, Any]) -> RecordingConsumer:
        self._consumer = RecordingConsumer(self, dict(settings))
        self._save_settings("consumer", settings)
        return self._consumer

    def producer(self, settings: dict[str, Any]) -> TxnProducer:
        self._producers.append(TxnProducer(self, dict(settings)))
        self._save_settings("producer", settings)
        return self._producers[-1]

    def output_value(self, record: Any) -> str:
        """The output of ``record``: its value upper-cased, after the input it was made from and who sent it."""
        self._seq += 1
        src = Position(str(record.topic()), int(record.partition()), int(record.offset()))
        raw = record.value()
        return output_value(src, self._proc.process, self._seq, None if raw is None else raw.decode())

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer._consumer.close()

    # -- the kit's part -----------------------------------------------------------------------
    def _kit_settings(self) -> dict[str, Any]:
        return dict(self._proc.kit_conf)

    def _producer_timeouts(self) -> dict[str, Any]:
        args, out = self._proc.args, {}
        out["transaction.timeout.ms"] = args.transaction_timeout_ms
        if args.message_timeout_ms is not None:
            out["message.timeout.ms"] = args.message_timeout_ms
        return out

    def _save_settings(self, client: str, settings: dict[str, Any]) -> None:
        path = Path(self._proc.args.history).with_suffix(".settings.json")
        saved = json.loads(path.read_text()) if path.exists() else {}
        saved[client] = {k: v if isinstance(v, (str, int, float, bool)) else str(v) for k, v in settings.items()}
        path.write_text(json.dumps(saved, indent=1))

    def _txn_ended(self) -> None:
        if self._consumer is not None:
            self._consumer.polled = {}

    def _hook(self, point: str) -> None:
        """The test hooks at ``point`` of the current transaction. Before a fault that cuts a transaction
        after its outputs (a kill, a pause, a stall there): flush them (acknowledged, as the point says) and, when
        the consumer commits on its own timer, let that commit happen first."""
        proc, here = self._proc, (point, self._proc.batch)
        if point == "after-produce" and here in (proc.die_at, proc.stall_at, proc.pause_at):
            for p in self._producers:
                p._producer.flush(CLIENT_CALL)
            if self._consumer is not None and self._consumer.auto_commit:
                self._consumer.wait_auto_commit()
        proc.die_if(point)
