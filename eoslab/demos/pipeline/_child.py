"""A processor of module 05's pipeline, run as its own OS process: ``python -m eoslab.demos.pipeline.child``.

It reads ``--input`` in a consumer group, writes one output per input to ``--output`` (same
partition, value from :func:`eoslab.demos.pipeline.output_value`), and records every poll,
delivery report, commit, abort and assignment in ``--history`` (:class:`eoslab.history.HistoryWriter`).

``--mode eos``: ``enable.auto.commit=false``, the input read with ``isolation.level=read_committed``,
each batch's outputs and its input offsets in one transaction (``send_offsets_to_transaction``
with ``consumer_group_metadata()`` fetched right before the call: with KIP-848 groups a stale member
epoch gets ILLEGAL_GENERATION). ``--mode alo``: the same transform, an idempotent producer, the
offsets committed (synchronously) after every output of the batch is acknowledged.

``--loop FILE.py:FUNCTION`` (eos): the function, a learner's ``run(pipe)``, drives the transactions
instead of :meth:`Processor.eos_batch`; the :class:`eoslab.demos.pipeline.Pipe` it gets records
the history, so what the checker reads is what the loop really did.

SIGTERM ends it cleanly after the current batch (exit 0). A fatal or fenced producer exits 3, an
error it does not know exits 4, a ``send_offsets_to_transaction`` that never returns exits 5
(:mod:`eoslab.demos.pipeline._watchdog`), each with one line on stderr.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Message, Producer, TopicPartition

from eoslab._timeouts import CLIENT_CALL
from eoslab.demos.pipeline._loop import Pipe, load_loop
from eoslab.demos.pipeline._parts import (
    FENCED,
    GROUP_PROTOCOLS,
    Action,
    PipelineError,
    abort_reason,
    classify,
    output_value,
    parse_die_at,
)
from eoslab.demos.pipeline._watchdog import SEND_OFFSETS_TIMEOUT, Watchdog
from eoslab.history import HistoryWriter, Position

EXIT_FATAL = 3
"""A fatal error (fenced: a newer incarnation with the same transactional.id took over)."""
EXIT_UNKNOWN = 4
"""An error the processor does not know how to handle: it stops rather than guess."""

BATCH = 20
"""Records per transaction (per offset commit in alo): small, so a run of a few hundred inputs has many."""
POLL_TIMEOUT = 0.5
"""One consume() call: short, so SIGTERM is noticed within half a second."""

SESSION_TIMEOUT_MS = 6000
"""session.timeout.ms: the broker's minimum (group.min.session.timeout.ms = 6 s). A processor killed
with SIGKILL never leaves its group; its restarted successor is assigned the partitions once this
session expires, so a smaller value makes the restart quicker."""
TRANSACTION_TIMEOUT_MS = 20000
"""transaction.timeout.ms: a transaction left open by a killed processor blocks read_committed readers
(the LSO) until its restarted successor's init_transactions aborts it or this timeout does; 20 s
is well above one batch's work."""

DEBUG_ENV = "EOSLAB_PIPELINE_DEBUG"
"""Set to librdkafka debug contexts (``eos,cgrp``) to have both clients log them on stderr."""

STALL_MARGIN = 4.0
"""``--stall-at`` sleeps transaction.timeout.ms plus this: the coordinator's 1 s abort check, with room."""

T = TypeVar("T")


class _Stop(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Processor:
    """One incarnation: its clients, its history and where it is."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.process = f"{args.process}-{os.getpid()}"
        self.h = HistoryWriter(args.history, process=self.process)
        self.watchdog = Watchdog(self.process)
        self.die_at = parse_die_at(args.die_at)
        self.stall_at = parse_die_at(args.stall_at)
        self.pause_at = parse_die_at(args.pause_at)
        self.stopping = False
        self.seq = 0  # sends so far: makes every output value unique
        self.failed = 0  # delivery reports with an error, in the current batch
        self.delivery_error = ""  # the first of them, "NAME: text": what makes a transaction abortable
        self.batch = 0
        debug = os.environ.get(DEBUG_ENV)  # librdkafka's own log, on stderr (e.g. "eos,cgrp,broker")
        self.kit_conf: dict[str, Any] = {"client.id": args.client_id, **({"debug": debug} if debug else {})}
        self.loop = load_loop(args.loop) if args.loop else None
        if self.loop is not None:
            return  # the learner's loop makes its clients from its own settings (Pipe.consumer, Pipe.producer)
        self.consumer_conf: dict[str, Any] = {
            "bootstrap.servers": args.bootstrap,
            "client.id": args.client_id,  # what the fault proxy's rules match
            "group.id": args.group,
            "enable.auto.commit": False,  # offsets go with the outputs (eos) or after them (alo), never on a timer
            "isolation.level": "read_committed",  # never read an aborted or open transaction's input
            "auto.offset.reset": "earliest",
        }
        if args.group_protocol == "consumer":
            # KIP-848: the broker sets the session and the heartbeat (group.consumer.session.timeout.ms, 6 s on
            # the course cluster; eoslab/topology.py); librdkafka refuses both settings with this protocol.
            self.consumer_conf["group.protocol"] = "consumer"
        else:
            self.consumer_conf |= {"session.timeout.ms": SESSION_TIMEOUT_MS, "heartbeat.interval.ms": 1000}
        self.consumer = Consumer({**self.consumer_conf, **({"debug": debug} if debug else {})})
        self.producer_config: dict[str, Any] = {
            "bootstrap.servers": args.bootstrap,
            "client.id": args.client_id,
            "acks": "all",
            "linger.ms": 5,
        }
        if args.mode == "eos":
            self.producer_config |= {
                "transactional.id": args.transactional_id,
                "transaction.timeout.ms": args.transaction_timeout_ms,
            }
            if args.message_timeout_ms is not None:  # librdkafka's default is transaction.timeout.ms itself
                self.producer_config["message.timeout.ms"] = args.message_timeout_ms
        else:
            self.producer_config |= {"enable.idempotence": True}
        if debug:
            self.producer_config["debug"] = debug
        self.producer = Producer(self.producer_config)

    # -- the pieces both modes share ------------------------------------------------------------
    def die_if(self, point: str) -> None:
        """The test hooks at ``point`` of batch N: SIGKILL (``--die-at point:N``), sleep past the
        transaction timeout (``--stall-at``), SIGSTOP (``--pause-at``)."""
        if self.die_at == (point, self.batch):
            os.kill(os.getpid(), signal.SIGKILL)
        if self.stall_at == (point, self.batch):
            # past transaction.timeout.ms the coordinator aborts the open transaction (its check runs every
            # transaction.abort.timed.out.transaction.cleanup.interval.ms = 1 s here) and bumps the epoch
            time.sleep(self.args.transaction_timeout_ms / 1000 + STALL_MARGIN)
        if self.pause_at == (point, self.batch):
            # SIGSTOP itself: every thread stops (no heartbeat), as a long GC pause; whoever started it resumes it
            os.kill(os.getpid(), signal.SIGSTOP)

    def on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        committed = consumer.committed(partitions, timeout=CLIENT_CALL)
        self.h.assigned(partitions, committed)

    def rewind(self) -> None:
        """Seek every assigned partition back to its committed offset (the start if none)."""
        assignment = self.consumer.assignment()
        if not assignment:
            return
        for tp in self.consumer.committed(assignment, timeout=CLIENT_CALL):
            self.consumer.seek(
                TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING)
            )

    def produce_batch(self, msgs: list[Message], txn: int | None) -> list[TopicPartition]:
        """Record the polls, send one output per input, wait for every delivery report; the offsets to commit."""
        ids: dict[str, Any] = {"transactional_id": self.args.transactional_id} if txn is not None else {}
        nxt: dict[tuple[str, int], int] = {}
        self.failed, self.delivery_error = 0, ""
        for m in msgs:
            self.h.polled(m)
            src = Position(str(m.topic()), int(m.partition() or 0), int(m.offset() or 0))
            self.seq += 1
            raw = m.value()
            value = output_value(src, self.process, self.seq, None if raw is None else raw.decode())

            def report(err: Any, msg: Any, src: Position = src) -> None:
                self.failed += err is not None
                if err is not None and not self.delivery_error:
                    self.delivery_error = f"{err.name()}: {err.str()}"
                self.h.delivered(err, msg, source=src, txn=txn, **ids)

            send = functools.partial(
                self.producer.produce,
                self.args.output,
                value=value,
                key=m.key(),
                partition=src.partition,
                on_delivery=report,
            )
            self.call(send)
            nxt[(src.topic, src.partition)] = src.offset + 1
        self.call(lambda: self.producer.flush(CLIENT_CALL))
        return [TopicPartition(t, p, o) for (t, p), o in sorted(nxt.items())]

    def send_offsets(self, offsets: list[TopicPartition]) -> None:
        """The batch's input offsets into its transaction, under the watchdog (librdkafka can block here forever)."""
        with self.watchdog.guard("send_offsets_to_transaction", SEND_OFFSETS_TIMEOUT):
            # Fresh before every call: a rebalance since the last batch changed the generation (member epoch).
            metadata = self.consumer.consumer_group_metadata()
            self.producer.send_offsets_to_transaction(offsets, metadata, SEND_OFFSETS_TIMEOUT)

    def call(self, fn: Callable[[], T]) -> T:
        """``fn()``, called again while it fails with a retriable error; other errors go up."""
        while True:
            try:
                return fn()
            except BufferError:  # the local queue is full: serve delivery reports, try again
                self.producer.poll(0.1)
            except KafkaException as e:
                err = e.args[0]
                if classify(err) is not Action.RETRY or self.stopping:
                    raise
                print(f"{self.process}: retrying after {err.name()}: {err.str()}", file=sys.stderr)

    def poll_batch(self) -> list[Message]:
        """Up to BATCH input records (none within POLL_TIMEOUT: ``[]``)."""
        return [m for m in self.consumer.consume(BATCH, POLL_TIMEOUT) if m.error() is None]

    # -- the loops --------------------------------------------------------------------------------
    def run(self) -> int:
        if self.loop is not None:
            return self.run_loop(self.loop)
        self.consumer.subscribe([self.args.input], on_assign=self.on_assign)
        if self.args.mode == "eos":
            self.call(lambda: self.producer.init_transactions(CLIENT_CALL))
        try:
            while not self.stopping:
                msgs = self.poll_batch()
                if msgs:
                    self.batch += 1
                    (self.eos_batch if self.args.mode == "eos" else self.alo_batch)(msgs)
        except _Stop as stop:
            print(f"{self.process}: {stop}", file=sys.stderr)
            return stop.code
        except KafkaException as e:  # abort_transaction (or init_transactions) itself failed: nothing left to try
            err = e.args[0]
            print(f"{self.process}: stopping on {err.name()} (fatal={err.fatal()}): {err.str()}", file=sys.stderr)
            return EXIT_FATAL if err.fatal() or err.name() in FENCED else EXIT_UNKNOWN
        finally:
            self.h.close()
        self.consumer.close()
        return 0

    def run_loop(self, loop: Callable[[Pipe], Any]) -> int:
        """The learner's loop instead of :meth:`eos_batch`: it returns (exit 0), or raises (3 if the
        producer is fenced or fatal, 4 otherwise, the error on stderr)."""
        pipe = Pipe(self)
        try:
            loop(pipe)
        except KafkaException as e:
            err = e.args[0]
            print(
                f"{self.process}: the loop stopped on {err.name()} (fatal={err.fatal()}): {err.str()}", file=sys.stderr
            )
            return EXIT_FATAL if err.fatal() or err.name() in FENCED else EXIT_UNKNOWN
        except Exception as e:  # noqa: BLE001 - the learner's code: say where it failed, exit
            traceback.print_exc(file=sys.stderr)
            print(f"{self.process}: the loop raised {type(e).__name__}: {e}", file=sys.stderr)
            return EXIT_UNKNOWN
        finally:
            self.h.close()
        pipe.close()
        return 0

    def eos_batch(self, msgs: list[Message]) -> None:
        txn = self.batch
        try:
            self.producer.begin_transaction()
            offsets = self.produce_batch(msgs, txn)
            self.die_if("after-produce")
            self.call(lambda: self.send_offsets(offsets))
            self.die_if("after-offsets")
            self.call(lambda: self.producer.commit_transaction(CLIENT_CALL))  # a timeout: retry the commit, never abort
            self.h.committed(txn, offsets, transactional_id=self.args.transactional_id)
            self.die_if("after-commit")
        except KafkaException as e:
            err = e.args[0]
            action = classify(err)
            if action is Action.ABORT:
                self.call(lambda: self.producer.abort_transaction(CLIENT_CALL))
                reason = abort_reason(f"{err.name()}: {err.str()}", self.delivery_error)
                self.h.aborted(txn, reason, transactional_id=self.args.transactional_id)
                self.rewind()
                return
            code = EXIT_FATAL if err.fatal() or err.name() in FENCED else EXIT_UNKNOWN
            raise _Stop(code, f"stopping on {err.name()} (fatal={err.fatal()}): {err.str()}") from None

    def alo_batch(self, msgs: list[Message]) -> None:
        offsets = self.produce_batch(msgs, None)
        if self.failed or len(self.producer) > 0:  # not every output acked: redo the batch from the committed offsets
            self.rewind()
            return
        self.die_if("after-produce")
        try:
            self.call(lambda: self.consumer.commit(offsets=offsets, asynchronous=False))
        except KafkaException as e:
            err = e.args[0]
            raise _Stop(EXIT_UNKNOWN, f"stopping: the offset commit failed with {err.name()}: {err.str()}") from None
        self.h.committed(None, offsets)
        self.die_if("after-commit")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m eoslab.demos.pipeline.child", description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=("eos", "alo"), required=True)
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--client-id", default="rdkafka", help="client.id of both clients (librdkafka's default)")
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--transactional-id", help="eos: the producer's transactional.id (the same across restarts)")
    ap.add_argument("--history", required=True, help="the history file (JSON lines) of this incarnation")
    ap.add_argument("--process", required=True, help="this incarnation's name in the history (the pid is added)")
    ap.add_argument("--die-at", help="POINT:N, SIGKILL itself at POINT of batch N (a test hook)")
    ap.add_argument("--stall-at", help="POINT:N, sleep past transaction.timeout.ms at POINT of batch N (a test hook)")
    ap.add_argument("--pause-at", help="POINT:N, SIGSTOP itself at POINT of batch N (a test hook; SIGCONT resumes)")
    ap.add_argument("--transaction-timeout-ms", type=int, default=TRANSACTION_TIMEOUT_MS)
    ap.add_argument("--message-timeout-ms", type=int, help="eos: message.timeout.ms (<= the transaction timeout)")
    ap.add_argument(
        "--group-protocol", choices=GROUP_PROTOCOLS, default="classic", help="the consumer's group.protocol"
    )
    ap.add_argument("--loop", help="eos: FILE.py:FUNCTION or MODULE:FUNCTION, run instead of the built-in batches")
    args = ap.parse_args(argv)
    if args.mode == "eos" and not args.transactional_id:
        ap.error("--mode eos needs --transactional-id")
    if args.loop and args.mode != "eos":
        ap.error("--loop drives a transactional producer: use it with --mode eos")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        proc = Processor(args)
    except (PipelineError, KafkaException) as e:
        print(f"pipeline: cannot start: {e}", file=sys.stderr)
        return EXIT_UNKNOWN

    def on_term(signum: int, frame: object) -> None:
        proc.stopping = True

    signal.signal(signal.SIGTERM, on_term)
    return proc.run()
