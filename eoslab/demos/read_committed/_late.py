"""A late Produce: what the leader answers a transactional write that arrives after its transaction.

The classic hanging transaction (KIP-890's motivation): a Produce delayed in the network
lands after the coordinator already ended its transaction. The leader appends it, opens a
transaction no coordinator will ever end, and the partition's LSO stops there for good.

KIP-890 part 1 (Kafka 3.6+, ``transaction.partition.verification.enable``, default true):
before the FIRST transactional append of a producer to a partition, the leader asks the
coordinator whether the partition is in that producer's ongoing transaction; a late write
is refused. The lesson sends the late write itself — a raw Produce with the producer's id,
epoch and next sequence, exactly what a delayed request would carry — through the proxy
(so the trace records the answer), in each case the module names, and measures the answer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab.demos._clients import TxnProducer, produce_raw, produce_request
from eoslab.protocol import encode_record_batch

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

VERIFICATION = "transaction.partition.verification.enable"
CONFIG_WAIT = 15.0  # a cluster-wide dynamic config reaches every broker through the metadata log in ~1 s


def verification(cluster: Cluster, broker: int = 1) -> tuple[bool, str]:
    """(is it on, where its value comes from) as ``broker`` reports it (DescribeConfigs)."""
    from confluent_kafka.admin import ConfigResource, ResourceType

    res = ConfigResource(ResourceType.BROKER, str(broker))
    entries = cluster.admin.client.describe_configs([res], request_timeout=10)[res].result(11)
    e = entries[VERIFICATION]
    from confluent_kafka.admin import ConfigSource

    return e.value == "true", ConfigSource(e.source).name


def set_verification(cluster: Cluster, enabled: bool) -> None:
    """Set it as a DYNAMIC per-broker config on every broker (IncrementalAlterConfigs, no restart), or
    delete that again (back to the static default, true); wait until every broker reports the value."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    from eoslab._wait import wait_until

    op = AlterConfigOpType.DELETE if enabled else AlterConfigOpType.SET
    resources = [
        ConfigResource(
            ResourceType.BROKER,
            str(b.node_id),
            incremental_configs=[ConfigEntry(VERIFICATION, "" if enabled else "false", incremental_operation=op)],
        )
        for b in cluster.topology.brokers
    ]
    for res in resources:  # librdkafka sends one BROKER resource per call
        cluster.admin.client.incremental_alter_configs([res], request_timeout=10)[res].result(11)
    wait_until(
        lambda: all(verification(cluster, b.node_id)[0] == enabled for b in cluster.topology.brokers),
        timeout=CONFIG_WAIT,
        what=f"every broker to report {VERIFICATION}={str(enabled).lower()}",
    )


@contextlib.contextmanager
def verification_off(cluster: Cluster) -> Iterator[None]:
    """KIP-890 part 1 switched off for the block, and on again however the block ends."""
    set_verification(cluster, False)
    try:
        yield
    finally:
        set_verification(cluster, True)


def error_name(code: int) -> str:
    """Kafka's name of an error code (confluent-kafka mirrors Kafka's Errors enum)."""
    from confluent_kafka import KafkaError

    if code == 0:
        return "NONE"
    names = {v: k for k, v in vars(KafkaError).items() if isinstance(v, int) and k.isupper() and not k.startswith("_")}
    return names.get(code, f"ERROR_{code}")


def next_sequence(cluster: Cluster, topic: str, partition: int, producer_id: int) -> int:
    """The sequence the producer's next batch to the partition must carry (DescribeProducers' LastSequence + 1)."""
    for s in ins.describe_producers(cluster, topic, partition):
        if s.producer_id == producer_id:
            return s.last_sequence + 1
    return 0


def late_produce(
    cluster: Cluster,
    producer: TxnProducer,
    topic: str,
    partition: int,
    *,
    value: str = "late",
    sequence: int | None = None,
    epoch: int | None = None,
    client_id: str = "late-produce",
) -> dict[str, Any]:
    """Send one transactional record with ``producer``'s id and epoch (and its next sequence unless
    ``sequence``) straight to the partition's leader, through the proxy; the leader's answer."""
    eos = producer.eos()
    seq = next_sequence(cluster, topic, partition, eos.producer_id) if sequence is None else sequence
    ep = eos.producer_epoch if epoch is None else epoch
    batch = encode_record_batch(
        [value.encode()], producer_id=eos.producer_id, producer_epoch=ep, base_sequence=seq, transactional=True
    )
    body = produce_request(topic, partition, batch, producer.transactional_id)
    resp = produce_raw(cluster, topic, partition, body, client_id)
    p = resp["Responses"][0]["PartitionResponses"][0]
    return {
        "producer_id": eos.producer_id,
        "epoch": ep,
        "sequence": seq,
        "error_code": p["ErrorCode"],
        "error": error_name(p["ErrorCode"]),
        "base_offset": p["BaseOffset"],
        "message": p.get("ErrorMessage"),
    }
