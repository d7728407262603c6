"""Mistake 9 (module 07's deep dive) on the real cluster: a broker restarted with a short
``transactional.id.expiration.ms`` forgets an idle id; a librdkafka zombie whose id was forgotten recovers from
INVALID_PRODUCER_ID_MAPPING by aborting, commits again and fences its successor; a program that stops on that error
keeps the successor's writes alone. ``eoslab.heal`` restarts the broker with the topology's settings."""

from __future__ import annotations

import itertools
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

import eoslab
from eoslab import inspect as ins
from eoslab.demos import wait_settled
from eoslab.m07_production.lesson import SHORT_EXPIRY, shorten_expiry, wait_forgotten

pytestmark = [pytest.mark.cluster]


def _producer(bootstrap: str, tid: str) -> Producer:
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
    p.init_transactions()
    return p


def _write(p: Producer, topic: str, value: str, stop_on_expired: bool = False) -> str:
    try:
        p.begin_transaction()
        p.produce(topic, value.encode())
        p.commit_transaction()
        return "committed"
    except KafkaException as e:
        err = e.args[0]
    if stop_on_expired and err.code() == KafkaError.INVALID_PRODUCER_ID_MAPPING:
        return "stopped"
    if not err.txn_requires_abort():
        return f"{err.name()} fatal={err.fatal()}"
    try:
        p.abort_transaction()
        return f"{err.name()} aborted"
    except KafkaException as e:
        return f"{err.name()} abort {e.args[0].name()} fatal={e.args[0].fatal()}"


def _setting(bootstrap: str, broker: int, name: str) -> str:
    resource = ConfigResource(ResourceType.BROKER, str(broker))
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept until the answer: a dropped client cancels it
    configs = admin.describe_configs([resource])[resource].result(timeout=15)
    return str(configs[name].value)


def _read_committed(bootstrap: str, topic: str) -> list[str]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"exp-{uuid.uuid4().hex[:6]}",
                  "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                  "enable.partition.eof": True})  # fmt: skip
    c.subscribe([topic])
    seen: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = c.poll(1)
        if m is None:
            continue
        if (err := m.error()) is not None:
            assert err.code() == KafkaError._PARTITION_EOF, err
            break
        seen.append((m.value() or b"").decode())
    c.close()
    return seen


def test_an_expired_id_lets_a_librdkafka_zombie_commit_again_unless_the_program_stops_on_it(healed):
    cluster = healed
    tag = uuid.uuid4().hex[:6]
    wrong_topic, right_topic = f"exp-w-{tag}", f"exp-r-{tag}"
    for topic in (wrong_topic, right_topic):
        cluster.admin.create_topic(topic, partitions=1)
    wrong_id = f"exp-{tag}"
    part = ins.coordinator_partition(wrong_id)
    right_id = next(
        f"{wrong_id}-{n}" for n in itertools.count() if ins.coordinator_partition(f"{wrong_id}-{n}") == part
    )
    broker = shorten_expiry(cluster, wrong_id)
    node = cluster.topology.broker(broker)
    b = cluster.bootstrap_servers()
    try:
        assert cluster.backend.overrides(node) == SHORT_EXPIRY
        for name, value in SHORT_EXPIRY.items():  # what the running broker says it was started with
            assert _setting(b, broker, name) == value
        assert ins.coordinator(cluster, right_id).reported == broker
        pairs = {}
        for tid, topic in ((wrong_id, wrong_topic), (right_id, right_topic)):
            zombie = _producer(b, tid)
            assert _write(zombie, topic, "zombie-1") == "committed"
            successor = _producer(b, tid)  # same producer id, epoch + 1; the zombie sends nothing meanwhile
            assert _write(successor, topic, "successor-1") == "committed"
            pairs[tid] = (zombie, successor)
        wait_forgotten(cluster, [wrong_id, right_id])

        zombie, successor = pairs[wrong_id]
        assert _write(zombie, wrong_topic, "zombie-2") == "INVALID_PRODUCER_ID_MAPPING aborted"
        assert _write(zombie, wrong_topic, "zombie-3") == "committed"  # the zombie got a new producer id
        assert _write(successor, wrong_topic, "successor-2") == ("INVALID_PRODUCER_ID_MAPPING abort _FENCED fatal=True")
        zombie, successor = pairs[right_id]
        assert _write(zombie, right_topic, "zombie-2", stop_on_expired=True) == "stopped"
        assert _write(successor, right_topic, "successor-2", stop_on_expired=True) == "stopped"
        restarted = _producer(b, right_id)  # the successor's restart: a new producer
        assert _write(restarted, right_topic, "successor-2") == "committed"
        wait_settled(cluster, [wrong_id, right_id])
        assert _read_committed(b, wrong_topic) == ["zombie-1", "successor-1", "zombie-3"]
        # the zombie came back under a producer id of its own: the coordinator made the forgotten id's entry anew
        assert len({r.producer_id for r in ins.describe_producers(cluster, wrong_topic, 0)}) == 2
        assert len({r.producer_id for r in ins.describe_producers(cluster, right_topic, 0)}) == 2  # the restart's
        assert _read_committed(b, right_topic) == ["zombie-1", "successor-1", "successor-2"]
    finally:
        eoslab.heal(cluster)
    assert cluster.backend.overrides(node) == {}
    assert _setting(b, broker, "transactional.id.expiration.ms") == str(7 * 24 * 3600 * 1000)  # Kafka's default
