"""Kafka clients for lessons: librdkafka settings as data, with a comment on every EOS-relevant line.

librdkafka logs through Python ``logging`` here (logger ``eoslab.librdkafka``, at WARNING), so a
retry it reports does not land in a notebook as red stderr text: the lines are kept
(``eoslab._librdkafka.KEPT.lines``); ``logging.getLogger("eoslab.librdkafka").addHandler(logging.StreamHandler())``
prints them as they come.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaError, Message, Producer

from eoslab._librdkafka import LESSONS as LIBRDKAFKA_LOGGER
from eoslab.errors import ClientError

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

PLAIN_PRODUCER: dict[str, Any] = {
    "acks": "all",  # the course's durability: the leader waits for the ISR (min 2 of 3)
    "enable.idempotence": False,  # librdkafka's default (Java's is true since 3.0, KIP-679): say it out loud
    "linger.ms": 5,
}

IDEMPOTENT_PRODUCER: dict[str, Any] = {
    "enable.idempotence": True,  # producer id + epoch + per-partition sequence numbers (KIP-98)
    "acks": "all",  # forced by idempotence: a batch is only "written" once the ISR has it
    "max.in.flight.requests.per.connection": 5,  # ≤ 5: the broker remembers the last 5 batches per producer
    "linger.ms": 5,
}


def _bootstrap(cluster: Cluster, proxied: bool) -> str:
    """The direct listeners, or the fault proxy's front ports with the proxy started if it is not running
    (a client pointed at a proxy that is not there retries "Connection refused" until it times out)."""
    if proxied:
        from eoslab.faults import ensure_proxy

        ensure_proxy(cluster)
    return cluster.bootstrap_servers(proxied=proxied)


def producer(cluster: Cluster, conf: dict[str, Any] | None = None, *, proxied: bool = False) -> Producer:
    """A confluent-kafka Producer on the course's cluster (through the fault proxy if ``proxied``).

    ``conf`` is laid over :data:`PLAIN_PRODUCER`, keyed by librdkafka's own property names.
    """
    settings = {**PLAIN_PRODUCER, **(conf or {})}
    settings.setdefault("bootstrap.servers", _bootstrap(cluster, proxied))
    settings.setdefault("logger", LIBRDKAFKA_LOGGER)
    return Producer(settings)


def consumer(cluster: Cluster, group: str, *, isolation: str, proxied: bool = False, **conf: Any) -> Consumer:
    """A Consumer with an EXPLICIT isolation level: librdkafka defaults to read_committed, Java to
    read_uncommitted, so a lesson that does not say which one is teaching by accident."""
    settings: dict[str, Any] = {
        "bootstrap.servers": _bootstrap(cluster, proxied),
        "group.id": group,
        "isolation.level": isolation,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "logger": LIBRDKAFKA_LOGGER,
        **conf,
    }
    return Consumer(settings)


WRITE_WAIT = 30.0
"""Seconds :func:`write_all` waits for the delivery reports: a batch on the course's cluster answers in well under
1 s; a record that cannot be written fails by ``message.timeout.ms`` (30 s in the course's transactional profile)."""


def write_all(
    producer: Producer,
    topic: str,
    records: Iterable[bytes | dict[str, Any]],
    *,
    timeout: float = WRITE_WAIT,
    **produce: Any,
) -> list[tuple[int, int]]:
    """Produce ``records`` to ``topic`` and wait for every delivery report: each record's (partition, offset), in
    the order of the reports.

    A record is its value (bytes) or the keyword arguments of its ``Producer.produce`` call (``value``, ``key``,
    ``partition``, ``headers``); ``produce`` is passed to every call. ``Producer.flush()`` returning 0 says the
    queue is empty, not that the records were written: a record that failed leaves the queue too, through a
    delivery report carrying its error (librdkafka's INTRODUCTION.md, "Message reliability"), e.g.
    ``_UNKNOWN_TOPIC`` for a topic that does not exist (the course's brokers run with
    ``auto.create.topics.enable=false``; after ``topic.metadata.propagation.max.ms``) or ``_MSG_TIMED_OUT``
    after ``message.timeout.ms``.

    Raises :class:`~eoslab.errors.ClientError`, one sentence naming the first failed report's error or how many
    reports had not come after ``timeout`` seconds.
    """
    reports: list[tuple[KafkaError | None, Message]] = []
    sent = 0
    for record in records:
        fields = record if isinstance(record, dict) else {"value": record}
        producer.produce(topic, on_delivery=lambda err, msg: reports.append((err, msg)), **produce, **fields)
        producer.poll(0)
        sent += 1
    producer.flush(timeout)
    failed = [err for err, _ in reports if err is not None]
    if failed:
        unknown = failed[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC)
        what_to_do = (
            f"create {topic} first (the course's brokers never create a topic on first use)"
            if unknown
            else "run eoslab.heal(cluster), then the cell again"
        )
        raise ClientError(
            f"{len(failed)} of {sent} records to {topic} were not written ({failed[0].name()}): {what_to_do}."
        )
    if len(reports) < sent:
        raise ClientError(
            f"{sent - len(reports)} of {sent} records to {topic} had no answer after {timeout:g} s: "
            "run eoslab.heal(cluster), then the cell again."
        )
    return [(msg.partition() or 0, msg.offset() or 0) for _, msg in reports]
