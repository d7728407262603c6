"""A transactional producer: writes a batch of records to a topic in one transaction, committed or aborted.

    python examples/transactional_producer.py --topic demo --transactional-id my-txn-app --count 3
    python examples/transactional_producer.py --topic demo --transactional-id my-txn-app --count 3 --abort

It prints each transactional call as it returns, every delivery report, and the outcome. A consumer with
``isolation.level=read_committed`` (read_committed_consumer.py) returns the records of a committed
transaction and never those of an aborted one, although both reached the log.

Every error a call raises is sorted the way librdkafka's transactional API documents (KafkaError flags):
fatal -> stop (the producer is fenced or broken: a newer instance with the same transactional.id took
over); abortable -> abort the transaction; retriable -> the SAME call again (a commit that timed out
too: it may already be durable, so it is retried, never aborted).

Plain confluent-kafka: copy it into your own project. Extra client settings go in with -X.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from confluent_kafka import KafkaError, KafkaException, Message, Producer

COURSE_CLUSTER = "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"
"""The course's brokers (eoslab's topology: broker-1..3, CLIENT listeners)."""
TIMEOUT = 30.0
"""Seconds each transactional call may take before it raises a retriable timeout."""

T = TypeVar("T")


class Abortable(Exception):
    """The transaction cannot commit any more (``txn_requires_abort()``): abort it."""


def producer_settings(bootstrap_servers: str, transactional_id: str) -> dict[str, Any]:
    """The settings of a transactional producer, each with why it is there."""
    return {
        "bootstrap.servers": bootstrap_servers,
        # Names the producer across restarts: init_transactions() with the same id fences the old instance
        # (its epoch is bumped) and aborts what it left open. Implies enable.idempotence=true and acks=all.
        "transactional.id": transactional_id,
        # An open transaction holds back every read_committed reader of its partitions (the LSO) until it
        # ends; the coordinator aborts it after this long (broker ceiling transaction.max.timeout.ms, 15 min).
        "transaction.timeout.ms": 60000,
    }


def extra_settings(pairs: list[str]) -> dict[str, str]:
    """``-X name=value`` options as client settings."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"-X {pair!r}: write it as name=value, e.g. -X transaction.timeout.ms=10000")
        out[name] = value
    return out


def call(what: str, fn: Callable[[], T], *, say: bool = True) -> T:
    """``fn()``, with every KafkaException sorted: fatal stops, abortable raises Abortable, retriable calls again."""
    while True:
        try:
            result = fn()
            if say:
                print(f"{what}: done")
            return result
        except KafkaException as e:
            err: KafkaError = e.args[0]
            if err.fatal():  # fenced or broken: nothing this producer does will work; a new instance takes over
                raise
            if err.txn_requires_abort():
                raise Abortable(f"{err.name()}: {err.str()}") from e
            if not err.retriable():
                raise
            print(f"{what}: {err.name()} (retriable), calling it again")


def produce(producer: Producer, topic: str, value: str, kwargs: dict[str, Any]) -> None:
    """One record into the transaction. A full local queue (BufferError): serve delivery reports, the same again."""
    while True:
        try:
            call(f"produce {value!r}", lambda: producer.produce(topic, value, **kwargs), say=False)
            return
        except BufferError:
            producer.poll(0.5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap-servers", default=COURSE_CLUSTER, help="default: the course cluster, %(default)s")
    ap.add_argument("--topic", default="demo", help="where to write (default: %(default)s)")
    ap.add_argument("--partition", type=int, help="one partition for every record (default: the partitioner's)")
    ap.add_argument("--transactional-id", default="my-txn-app", help="default: %(default)s")
    ap.add_argument("--count", type=int, default=3, help="records in the transaction (default: %(default)s)")
    ap.add_argument("--prefix", default="txn record", help="each value is PREFIX N (default: %(default)s)")
    ap.add_argument("--abort", action="store_true", help="abort the transaction instead of committing it")
    ap.add_argument("-X", dest="extra", action="append", default=[], metavar="NAME=VALUE", help="a client setting")
    args = ap.parse_args(argv)
    extra = extra_settings(args.extra)

    reports: list[tuple[KafkaError | None, Message]] = []
    producer = Producer({**producer_settings(args.bootstrap_servers, args.transactional_id), **extra})
    call("init_transactions", lambda: producer.init_transactions(TIMEOUT))
    call("begin_transaction", producer.begin_transaction)
    kwargs: dict[str, Any] = {"on_delivery": lambda e, m: reports.append((e, m))}
    if args.partition is not None:
        kwargs["partition"] = args.partition
    try:
        for n in range(args.count):
            produce(producer, args.topic, f"{args.prefix} {n}", kwargs)
        if args.abort:
            producer.flush(TIMEOUT)  # the records reach the log first: the abort then has something to hide
            call("abort_transaction", lambda: producer.abort_transaction(TIMEOUT))
        else:
            call("commit_transaction", lambda: producer.commit_transaction(TIMEOUT))
    except Abortable as why:
        print(f"the transaction cannot commit ({why}): aborting it")
        call("abort_transaction", lambda: producer.abort_transaction(TIMEOUT))
        args.abort = True
    producer.poll(0)  # the delivery reports the commit's flush left queued
    for err, msg in reports:
        where = f"{msg.topic()}[{msg.partition()}]@{msg.offset()}"
        print(f"{(msg.value() or b'').decode()!r} -> " + (where if err is None else f"FAILED: {err.name()}"))
    outcome = "ABORTED" if args.abort else "COMMITTED"
    print(f"{len(reports)} records in one transaction of {args.transactional_id!r}: {outcome}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KafkaException as e:
        err = e.args[0]
        sys.exit(f"transactional_producer: stopped on {err.name()} (fatal={err.fatal()}): {err.str()}")
