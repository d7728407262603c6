"""Kafka clients for lessons: librdkafka settings as data, with a comment on every EOS-relevant line.

librdkafka logs through Python ``logging`` here (logger ``eoslab.librdkafka``, at WARNING), so a
retry it reports does not land in a notebook as red stderr text; turn it up with
``logging.getLogger("eoslab.librdkafka").setLevel(logging.INFO)`` to see them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, Producer

from eoslab._librdkafka import LESSONS as LIBRDKAFKA_LOGGER

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
