"""The lesson clients, one home for every module's demos and checks: the observed idempotent producer with
one record's send and the table of a partition's batches (modules 01 and 02), the transactional producer (librdkafka
settings as data, every EOS line commented), the Java 4.4 producer's settings, the consumer with an explicit
isolation level, the reads and waits the lessons share (what the log holds at an isolation level, the
coordinators done writing markers), and the run ids. A module's own code imports these from here, never
from another module's package.

Every producer here goes through the fault proxy (so the trace sees it), logs
through Python ``logging`` into its own :class:`~eoslab.inspect.ClientLog`
(``producer.log.grep(...)``: librdkafka's warnings never land in a notebook
as red text), and carries a ``client.id`` that scopes the proxy's rules.

Observed on the real cluster (Kafka 4.1.2, confluent-kafka 2.16.1 / librdkafka 2.16.0):
librdkafka refuses ``message.timeout.ms`` > ``transaction.timeout.ms`` at
construction ("must be set <= `transaction.timeout.ms`").
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._librdkafka import LESSONS
from eoslab._wait import wait_until
from eoslab.clients import write_all
from eoslab.faults import demo_producer_config
from eoslab.protocol import KafkaConnection

if TYPE_CHECKING:
    import pandas as pd
    from confluent_kafka import Consumer

    from eoslab.cluster import Cluster

TXN_PRODUCER: dict[str, Any] = {
    # transactional.id (set per producer) implies these two; said out loud.
    "enable.idempotence": True,  # producer id + epoch + sequence numbers under every transactional batch
    "acks": "all",  # a batch is written once min.insync.replicas=2 replicas have it
    # How long the coordinator lets a transaction stay open before it aborts it itself (and bumps the
    # epoch, which fences this producer). librdkafka's default is 60 s; the broker caps it with
    # transaction.max.timeout.ms (15 min by default).
    "transaction.timeout.ms": 60000,
    # In transactional mode librdkafka DERIVES message.timeout.ms and socket.timeout.ms from the
    # transaction timeout unless they are set; set them, so a lesson that lowers one knows the others.
    "message.timeout.ms": 30000,  # a record not acknowledged within 30 s fails the transaction (abortable)
    "socket.timeout.ms": 10000,  # a request without an answer for 10 s is retried on a new connection
    "linger.ms": 5,  # small batches, sent at once: a lesson's few records each make one batch per partition
    # Reconnect and retry quickly after the proxy cut a connection or a broker was killed.
    "reconnect.backoff.ms": 50,
    "reconnect.backoff.max.ms": 500,
    "retry.backoff.ms": 50,
}

READ_COMMITTED: dict[str, Any] = {
    # librdkafka's default is read_committed, Java's (and Spark's) read_uncommitted: always say which.
    "isolation.level": "read_committed",
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,  # offsets move only where the lesson commits them
}

JAVA_PRODUCER: dict[str, Any] = {  # the Java 4.4 producer's (eoslab.java_client), as close to TXN_PRODUCER as it goes
    "linger.ms": 5,  # as the librdkafka producer's
    "request.timeout.ms": 10000,  # as its socket.timeout.ms
    "delivery.timeout.ms": 30000,  # as its message.timeout.ms (must be >= linger.ms + request.timeout.ms)
}

LOGGER = LESSONS.getChild("transactions")
"""The lesson's librdkafka clients: each producer logs into its own child, kept in ``producer.log``."""


def run_id() -> str:
    """A short id for one run of a lesson or a check: every transactional id and topic gets it."""
    return uuid.uuid4().hex[:6]


# -- the observed idempotent producer of modules 01 and 02, one record's send and a partition's batches ------------

SEND_TIMEOUT = 60.0
"""One record's delivery report through the proxy, when a lesson drops its ack: the resend follows
socket.timeout.ms (3 s) and message.timeout.ms is 30 s, so a report comes well inside 60 s."""


@dataclass(frozen=True)
class Delivery:
    """What the client was told about one record: its offset, or the error."""

    topic: str
    partition: int
    offset: int
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None

    def __str__(self) -> str:
        """As examples/idempotent_producer.py prints a delivery report: ``demo[0]@2``, or the error."""
        where = f"{self.topic}[{self.partition}]"
        return f"{where}@{self.offset}" if self.ok else f"{where} FAILED: {self.error}"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))  # a cell's result reads as the sentence, repr() keeps the fields


def producer(
    cluster: Cluster, client_id: str, *, idempotent: bool = True, debug: str = "eos", **conf: Any
) -> ins.ObservedProducer:
    """An observed librdkafka producer through the fault proxy, with the demo profile.

    librdkafka's own log lines (its ``eos`` debug lines, and notices such as "Timed out
    ProduceRequest in flight") are kept in ``producer.log`` (``.grep(text)``) instead of
    landing in the notebook as stderr.
    """
    settings = demo_producer_config(cluster.bootstrap_servers(proxied=True), client_id, **conf)
    settings["enable.idempotence"] = idempotent
    if not idempotent:
        settings.setdefault("retries", 5)  # librdkafka retries by default too: say so, the duplicate needs it
    p = ins.ObservedProducer(settings, debug=debug)
    p.client_id = client_id  # type: ignore[attr-defined]
    return p


def send(
    p: Any, topic: str, partition: int, value: bytes | str, *, key: bytes | None = None, timeout: float = SEND_TIMEOUT
) -> Delivery:
    """Produce ONE record and wait for its delivery report (one record = one batch with linger.ms=0)."""
    reports: list[Delivery] = []

    def on_delivery(err: Any, msg: Any) -> None:
        reports.append(Delivery(msg.topic(), msg.partition(), msg.offset(), err.name() if err else None))

    data = value.encode() if isinstance(value, str) else value
    p.produce(topic, value=data, key=key, partition=partition, on_delivery=on_delivery)
    p.flush(timeout)
    wait_until(lambda: reports, timeout=timeout, what=f"the delivery report of a record to {topic}-{partition}")
    return reports[0]


def batches(
    cluster: Cluster,
    topic: str,
    partition: int,
    *,
    producer_ids: list[int] | None = None,
    broker: int | None = None,
    values: bool = True,
) -> pd.DataFrame:
    """Batch headers of one replica (the leader by default), as a table; only these producers' if given.

    ``values`` adds the first record's value, so a duplicate by content is visible.
    """
    import pandas as pd

    keep = [
        "base_offset",
        "last_offset",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "last_sequence",
        "is_transactional",
        "is_control",
        "size",
    ]
    rows = []
    for b in ins.batches(cluster, topic, partition, broker=broker, records=values, data=values):
        if producer_ids is not None and b.producer_id not in producer_ids:
            continue
        row = {k: getattr(b, k) for k in keep}
        if values:
            row["value"] = b.records[0].value if b.records else None
        rows.append(row)
    return pd.DataFrame(rows, columns=keep + (["value"] if values else []))


class TxnProducer(ins.ObservedProducer):
    """An :class:`~eoslab.inspect.ObservedProducer` that knows its ``client.id`` and ``transactional.id``."""

    client_id: str
    transactional_id: str


def transactional_producer(
    cluster: Cluster,
    transactional_id: str,
    client_id: str | None = None,
    *,
    proxied: bool = True,
    debug: str | None = None,
    conf: dict[str, Any] | None = None,
) -> TxnProducer:
    """A librdkafka transactional producer (not yet initialised) with :data:`TXN_PRODUCER` settings.

    ``conf`` overrides them, keyed by librdkafka's property names (``{"transaction.timeout.ms": 3000}``).
    """
    settings = {**TXN_PRODUCER, **(conf or {})}
    settings.update(
        {
            "bootstrap.servers": cluster.bootstrap_servers(proxied=proxied),
            "transactional.id": transactional_id,
            "client.id": client_id or transactional_id,
        }
    )
    logger = logging.getLogger(f"{LOGGER.name}.{settings['client.id']}")
    logger.propagate = False  # kept in the producer's own log, not printed under a notebook cell
    logger.setLevel(logging.DEBUG if debug else logging.INFO)
    for h in list(logger.handlers):  # a re-run of the same client id: the old producer's log is not ours
        logger.removeHandler(h)
    settings["logger"] = logger
    p = TxnProducer(settings, debug=debug)
    if not debug:  # (with debug, ObservedProducer attached its log itself)
        logger.addHandler(p.log)
    p.client_id = settings["client.id"]
    p.transactional_id = transactional_id
    return p


def consumer(
    cluster: Cluster,
    group: str,
    *,
    isolation: str = "read_committed",
    proxied: bool = False,
    conf: dict[str, Any] | None = None,
) -> Consumer:
    """A consumer with an EXPLICIT isolation level and no auto commit (see :data:`READ_COMMITTED`).

    ``conf`` adds or overrides settings, keyed by librdkafka's property names.
    """
    from confluent_kafka import Consumer

    settings = {
        **READ_COMMITTED,
        "bootstrap.servers": cluster.bootstrap_servers(proxied=proxied),
        "group.id": group,
        "isolation.level": isolation,
        "logger": LOGGER,
        **(conf or {}),
    }
    return Consumer(settings)


def read_values(
    cluster: Cluster,
    topic: str,
    partitions: list[int] | None = None,
    *,
    isolation: str = "read_committed",
    timeout: float = 10.0,
) -> list[tuple[int, int, str]]:
    """(partition, offset, value) of every record a consumer with ``isolation`` reads from the start.

    Reads up to the end offsets as that isolation level sees them (the LSO for
    ``read_committed``, the high watermark otherwise), so it returns once it got
    everything visible, not after a fixed wait.
    """
    from confluent_kafka import TopicPartition

    if partitions is None:
        partitions = [p.partition for p in cluster.partitions(topic)]
    ends = {
        o.partition: (o.last_stable if isolation == "read_committed" else o.high_watermark)
        for o in ins.offsets(cluster, topic, partitions)
    }
    c = consumer(cluster, f"eoslab-reader-{run_id()}", isolation=isolation)
    try:
        c.assign([TopicPartition(topic, p, 0) for p in partitions])
        out: list[tuple[int, int, str]] = []
        positions = {p: 0 for p in partitions}

        def done() -> bool:
            for m in c.consume(100, 0.2):
                part, off = m.partition(), m.offset()
                if m.error() is None and part is not None and off is not None:
                    out.append((part, off, (m.value() or b"").decode()))
                    positions[part] = off + 1
            # Markers and aborted records take offsets but are never delivered: ask the client.
            for tp in c.position([TopicPartition(topic, p) for p in partitions]):
                if tp.offset >= 0:
                    positions[tp.partition] = max(positions[tp.partition], tp.offset)
            return all(positions[p] >= ends[p] for p in partitions)

        wait_until(done, timeout=timeout, interval=0.0, what=f"a {isolation} read of {topic} up to {ends}")
        return sorted(out)
    finally:
        c.close()


def committed_offsets(cluster: Cluster, group: str, topic: str, partitions: list[int]) -> dict[int, int]:
    """The group's committed offset per partition (-1001 = none), asked of the group coordinator."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    req = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in partitions])]
    result = cluster.admin.client.list_consumer_group_offsets(req)[group].result(timeout=15)
    return {tp.partition: tp.offset for tp in result.topic_partitions}


def seed_input(cluster: Cluster, topic: str, values: list[str]) -> None:
    """Create ``topic`` (one partition, replicas on all brokers) and write ``values`` to it, idempotently.

    Raises :class:`~eoslab.errors.ClientError` when a value is not written (:func:`eoslab.clients.write_all`)."""
    from confluent_kafka import Producer

    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3]])
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers(), "enable.idempotence": True, "logger": LOGGER})
    write_all(p, topic, (v.encode() for v in values), partition=0)


SETTLE_WAIT = 30.0  # s: markers follow EndTxn in milliseconds; a coordinator failover takes ~5 s (session timeout)
TRANSACTIONAL_ID_NOT_FOUND = 105
UNSETTLED = ("PrepareCommit", "PrepareAbort", "PrepareEpochFence")


def coordinator_state(cluster: Cluster, transactional_id: str, timeout: float = 5.0) -> str | None:
    """The coordinator's current state of ``transactional_id`` (DescribeTransactions, API 65, in-process).

    ``"Unknown"`` for an id no coordinator knows (TRANSACTIONAL_ID_NOT_FOUND, 105); ``None`` while no
    coordinator answers for it (a failover, a partition still loading).
    """
    c = ins.coordinator(cluster, transactional_id)
    if c.error is not None or not c.reported or c.reported < 0:
        return None
    node = cluster.topology.broker(c.reported)
    with KafkaConnection(*node.direct_address(), client_id="eoslab-lesson", timeout=timeout) as conn:
        resp = conn.request("DescribeTransactions", None, {"TransactionalIds": [transactional_id]})
    state = resp["TransactionStates"][0]
    if state["ErrorCode"] == TRANSACTIONAL_ID_NOT_FOUND:
        return "Unknown"
    return None if state["ErrorCode"] else str(state["TransactionState"])


def wait_settled(cluster: Cluster, transactional_ids: list[str], timeout: float = SETTLE_WAIT) -> None:
    """Until no id is between EndTxn and its last marker (Prepare*): then every marker is on disk."""

    def settled() -> bool:
        return all(coordinator_state(cluster, t) not in (*UNSETTLED, None) for t in transactional_ids)

    wait_until(
        settled,
        timeout=timeout,
        what=f"the coordinators to finish writing markers for {transactional_ids}",
        hint="A transaction stays in PrepareCommit/PrepareAbort while a partition leader is unreachable.",
    )


PRODUCE_VERSION = 9
"""Produce v9: topic names (v13+ sends topic ids), no KIP-890 part 2. librdkafka >= 2.5 sends v10
(rd_kafka_ProduceRequest_max_version in rdkafka_msgset_writer.c), which KIP-951 made the same request as v9 under a
new number; this stays 9 so the bytes the kit sends do not change (the broker accepts 3-13)."""
PRODUCE_TIMEOUT_MS = 10000
"""acks=all waits for the in-sync replicas, milliseconds on loopback; 10 s covers a busy laptop."""


def produce_request(topic: str, partition: int, batch: bytes, transactional_id: str | None = None) -> dict[str, Any]:
    """A Produce v9 body (acks=all) carrying one record ``batch`` (:func:`eoslab.protocol.encode_record_batch`)."""
    return {
        "TransactionalId": transactional_id,
        "Acks": -1,
        "TimeoutMs": PRODUCE_TIMEOUT_MS,
        "TopicData": [{"Name": topic, "PartitionData": [{"Index": partition, "Records": batch}]}],
    }


def produce_raw(cluster: Cluster, topic: str, partition: int, body: dict[str, Any], client_id: str) -> dict[str, Any]:
    """Send ``body`` (:func:`produce_request`) to the partition's leader through the fault proxy (its trace records
    it under ``client_id``): what the kit does where no client lets a learner choose the producer id, epoch or
    sequence (modules 02 and 04). Returns the decoded Produce response; a broker error is in it, not raised.
    Raises :class:`eoslab.protocol.KafkaConnectionError` when the leader's proxy front cannot be reached."""
    from eoslab.faults import Proxy

    leader = cluster.leader(topic, partition)
    return Proxy.connect(cluster).request(leader, "Produce", body, version=PRODUCE_VERSION, client_id=client_id)
