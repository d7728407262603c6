"""The module's topic, and the two defaults that make ``isolation.level`` worth saying out loud.

librdkafka (so confluent-kafka) defaults ``isolation.level`` to read_committed; the Java
client (and Spark's Kafka source, built on it) to read_uncommitted. The same topic read
with each client's default returns different records: both are shown here, measured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eoslab.demos._clients import run_id
from eoslab.demos.read_committed._log import WrittenLog

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

JAVA_READ_TIMEOUT_MS = 15_000  # the console consumer's guard: a JVM start, a group join and a fetch take ~5 s


def new_topic(cluster: Cluster, prefix: str = "rc") -> str:
    """A fresh topic whose partition A (0) is led by broker 1 and B (1) by broker 2, as the course draws it."""
    topic = f"{prefix}-{run_id()}"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    return topic


def default_isolation(log: WrittenLog, timeout: float = 10.0) -> list[str]:
    """The values a confluent-kafka consumer WITHOUT ``isolation.level`` returns (librdkafka's default)."""
    from confluent_kafka import Consumer, TopicPartition

    from eoslab._librdkafka import LESSONS as LOGGER
    from eoslab._wait import wait_until

    conf = {
        "bootstrap.servers": log.cluster.bootstrap_servers(),
        "group.id": f"rc-default-{run_id()}",
        "enable.auto.commit": False,
        "logger": LOGGER,
        # no isolation.level: its default is what this function shows
    }
    c = Consumer(conf)
    got: list[str] = []
    try:
        c.assign([TopicPartition(log.topic, log.partition, 0)])
        seen = [0]

        def quiet() -> bool:
            batch = [m for m in c.consume(100, 0.5) if m.error() is None]
            got.extend((m.value() or b"").decode() for m in batch)
            seen[0] = 0 if batch else seen[0] + 1
            return seen[0] >= 3  # three empty polls (1.5 s) after the last record

        wait_until(quiet, timeout=timeout, interval=0.0, what="a default-configured librdkafka consumer to go quiet")
    finally:
        c.close()
    return got


def java_console_read(log: WrittenLog, max_messages: int) -> list[str]:
    """The values Kafka's Java console consumer returns with the Java client's defaults (one JVM start)."""
    out = log.cluster.tool(
        "console-consumer",
        "--bootstrap-server",
        "{bootstrap}",
        "--topic",
        log.topic,
        "--partition",
        str(log.partition),
        "--offset",
        "earliest",
        "--max-messages",
        str(max_messages),
        "--timeout-ms",
        str(JAVA_READ_TIMEOUT_MS),
    )
    return [line for line in out.splitlines() if line.strip() and not line.startswith("Processed")]
