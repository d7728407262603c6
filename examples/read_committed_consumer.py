"""A read_committed consumer: reads a topic from its start to its end and prints what it was given.

    python examples/read_committed_consumer.py --topic demo
    python examples/read_committed_consumer.py --topic demo --isolation-level read_uncommitted

With ``isolation.level=read_committed`` the consumer is given the records of committed transactions (and
of producers that use none), never those of an aborted transaction, and nothing past the partition's last
stable offset (LSO): the first offset of the earliest transaction still open. The offsets it skips were
taken by aborted records and by transaction markers (one control batch per partition per transaction).

It reads each partition to the end the broker offers (read_committed: the LSO; read_uncommitted: the high
watermark), prints every record and, per partition, how many offsets it was given of those it read past.
It commits nothing: ``group.id`` is required by the client, not used.

Plain confluent-kafka: copy it into your own project. Extra client settings go in with -X.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

COURSE_CLUSTER = "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"
"""The course's brokers (eoslab's topology: broker-1..3, CLIENT listeners)."""


def consumer_settings(bootstrap_servers: str, group: str, isolation_level: str) -> dict[str, Any]:
    """The consumer's settings, each with why it is there."""
    return {
        "bootstrap.servers": bootstrap_servers,
        "group.id": group,
        # librdkafka's default is read_committed; the Java consumer's, the console consumer's and Spark's is
        # read_uncommitted. Set it explicitly, so the code says what it reads whichever client runs it.
        "isolation.level": isolation_level,
        "enable.auto.commit": False,  # a reader, not a processor: it moves no group's offsets
        "enable.partition.eof": True,  # a _PARTITION_EOF event when a partition is read to its end
    }


def extra_settings(pairs: list[str]) -> dict[str, str]:
    """``-X name=value`` options as client settings."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"-X {pair!r}: write it as name=value, e.g. -X fetch.wait.max.ms=100")
        out[name] = value
    return out


def read_to_end(consumer: Consumer, topic: str, timeout: float) -> dict[int, list[Any]]:
    """Every record of every partition of ``topic``, from its start to the end the broker offers."""
    meta = consumer.list_topics(topic, timeout=timeout).topics[topic]
    if meta.error is not None:
        raise KafkaException(meta.error)
    partitions = sorted(meta.partitions)
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
    records: dict[int, list[Any]] = {p: [] for p in partitions}
    open_partitions = set(partitions)
    deadline = time.monotonic() + timeout
    while open_partitions and time.monotonic() < deadline:
        msg: Any = consumer.poll(0.5)
        if msg is None:
            continue
        err = msg.error()
        if err is not None:
            if err.code() == KafkaError._PARTITION_EOF:
                open_partitions.discard(msg.partition())
                continue
            raise KafkaException(err)
        records[msg.partition()].append(msg)
    if open_partitions:
        raise SystemExit(f"partitions {sorted(open_partitions)} of {topic} not read to their end within {timeout} s")
    return records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap-servers", default=COURSE_CLUSTER, help="default: the course cluster, %(default)s")
    ap.add_argument("--topic", default="demo", help="what to read (default: %(default)s)")
    ap.add_argument(
        "--isolation-level",
        choices=("read_committed", "read_uncommitted"),
        default="read_committed",
        help="default: %(default)s",
    )
    ap.add_argument("--group", default=f"reader-{os.getpid()}", help="group.id (nothing is committed)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds to read to the end (default: %(default)s)")
    ap.add_argument("-X", dest="extra", action="append", default=[], metavar="NAME=VALUE", help="a client setting")
    args = ap.parse_args(argv)

    settings = consumer_settings(args.bootstrap_servers, args.group, args.isolation_level)
    consumer = Consumer({**settings, **extra_settings(args.extra)})
    try:
        records = read_to_end(consumer, args.topic, args.timeout)
        ends = {p: consumer.position([TopicPartition(args.topic, p)])[0].offset for p in records}
    finally:
        consumer.close()
    for p, msgs in records.items():
        for m in msgs:
            print(f"{args.topic}[{p}]@{m.offset()} {m.value().decode(errors='replace')!r}")
    for p, msgs in records.items():
        end = max(ends[p], 0)
        print(
            f"partition {p}: {len(msgs)} records given of offsets 0..{end - 1} ({args.isolation_level}); "
            f"{end - len(msgs)} offsets skipped (aborted records, transaction markers, or deleted)"
        )
    print(f"{sum(map(len, records.values()))} records read from {args.topic} with {args.isolation_level}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KafkaException as e:
        sys.exit(f"read_committed_consumer: {e.args[0].str()}")
