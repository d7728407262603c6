"""An idempotent producer: writes records to a topic, each once, even when the network loses an acknowledgement.

    python examples/idempotent_producer.py --topic demo --count 5

It prints every delivery report (where the leader put the record) and the producer id and epoch the
cluster gave it. With idempotence on, the producer numbers its batches per partition (producer id,
epoch, sequence; KIP-98), so a batch it resends after a lost acknowledgement is recognised by the leader
and answered with the original offset instead of being written again.

Plain confluent-kafka: copy it into your own project. Extra client settings go in with -X, e.g.
``-X socket.timeout.ms=3000`` (librdkafka resends a request whose answer never came after this long).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

COURSE_CLUSTER = "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"
"""The course's brokers (eoslab's topology: broker-1..3, CLIENT listeners)."""


def producer_settings(bootstrap_servers: str) -> dict[str, Any]:
    """The settings that make a librdkafka producer idempotent, each with why it is there."""
    return {
        "bootstrap.servers": bootstrap_servers,
        # librdkafka's default is false (the Java client's is true since Kafka 3.0, KIP-679): set it.
        "enable.idempotence": True,
        # Idempotence needs every in-sync replica to have a batch before it counts as written;
        # librdkafka refuses any other acks together with enable.idempotence.
        "acks": "all",
        # The statistics (every 100 ms here) carry the producer id and epoch: eos.producer_id, eos.producer_epoch.
        "statistics.interval.ms": 100,
    }


def extra_settings(pairs: list[str]) -> dict[str, str]:
    """``-X name=value`` options as client settings."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"-X {pair!r}: write it as name=value, e.g. -X socket.timeout.ms=3000")
        out[name] = value
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bootstrap-servers", default=COURSE_CLUSTER, help="default: the course cluster, %(default)s")
    ap.add_argument("--topic", default="demo", help="where to write (default: %(default)s)")
    ap.add_argument("--partition", type=int, help="one partition for every record (default: the partitioner's)")
    ap.add_argument("--count", type=int, default=5, help="how many records (default: %(default)s)")
    ap.add_argument("--prefix", default="record", help="each value is PREFIX N (default: %(default)s)")
    ap.add_argument("-X", dest="extra", action="append", default=[], metavar="NAME=VALUE", help="a client setting")
    args = ap.parse_args(argv)

    eos: dict[str, Any] = {}

    def on_stats(raw: str) -> None:
        eos.update(json.loads(raw).get("eos", {}))

    reports: list[tuple[KafkaError | None, Message]] = []
    producer = Producer(
        {**producer_settings(args.bootstrap_servers), **extra_settings(args.extra)},
        stats_cb=on_stats,
    )
    for n in range(args.count):
        value = f"{args.prefix} {n}"
        kwargs: dict[str, Any] = {} if args.partition is None else {"partition": args.partition}
        while True:
            try:
                producer.produce(args.topic, value=value, on_delivery=lambda e, m: reports.append((e, m)), **kwargs)
                break
            except BufferError:  # the local queue is full: serve delivery reports, then the same record again
                producer.poll(0.5)
    left = producer.flush(60)  # waits for every delivery report (message.timeout.ms bounds each)
    deadline = time.monotonic() + 2
    while eos.get("producer_id", -1) < 0 and time.monotonic() < deadline:
        producer.poll(0.1)  # the next statistics report

    for err, msg in reports:
        where = f"{msg.topic()}[{msg.partition()}]@{msg.offset()}"
        print(
            f"{(msg.value() or b'').decode()!r} -> " + (where if err is None else f"FAILED: {err.name()}: {err.str()}")
        )
    written = sum(err is None for err, _ in reports)
    unreported = f", {left} without a delivery report" if left else ""
    print(
        f"{written} of {args.count} records written{unreported}; producer id "
        f"{eos.get('producer_id', '?')}, epoch {eos.get('producer_epoch', '?')}"
    )
    return 0 if written == args.count else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KafkaException as e:
        sys.exit(f"idempotent_producer: {e.args[0].str()}")
