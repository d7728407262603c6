"""A lost ack on the real cluster: duplicated without idempotence, deduplicated with it.

The proxy lets the Produce reach the leader (which writes it) and drops the
answer, closing the client's connection so librdkafka resends at once. What
reached the disk is counted twice over: the high watermark, and the batches
that `kafka-dump-log` finds in the leader's segment.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from eoslab.faults import Proxy, demo_producer_config

pytestmark = pytest.mark.cluster


def _high_watermark(cluster, topic: str, partition: int = 0) -> int:
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers(), "group.id": f"hw-{uuid.uuid4().hex[:6]}"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)[1]
    finally:
        c.close()


def _batches_on_disk(cluster, topic: str, partition: int = 0) -> list[str]:
    """The batch lines of the leader's first segment, as kafka-dump-log prints them."""
    node = cluster.topology.broker(cluster.leader(topic, partition))
    folder = f"{cluster.backend.data_path(node)}/{topic}-{partition}"
    host = cluster.backend.host_data_path(node)
    segment = sorted(p.name for p in (Path(host) / f"{topic}-{partition}").glob("*.log"))[0]
    out = cluster.tool("dump-log", "--files", f"{folder}/{segment}")
    return [ln for ln in out.splitlines() if ln.startswith("baseOffset:")]


def _lose_first_ack(cluster, proxy: Proxy, topic: str, client_id: str, **conf) -> list[tuple]:
    cluster.admin.create_topic(topic, partitions=1)
    producer = Producer(demo_producer_config(cluster.bootstrap_servers(proxied=True), client_id, **conf))
    reports: list[tuple] = []
    with proxy.drop_response(api="Produce", client_id=client_id, close=True) as fault:
        producer.produce(topic, b"one", on_delivery=lambda e, m: reports.append((e, m.offset())))
        assert producer.flush(30) == 0
        assert fault.fired == 1
    return reports


def test_lost_ack_without_idempotence_writes_a_duplicate(cluster, proxy, topic_name):
    cid = f"dup-{uuid.uuid4().hex[:8]}"
    reports = _lose_first_ack(cluster, proxy, topic_name, cid, **{"enable.idempotence": False, "retries": 5})
    assert reports == [(None, 1)]  # the client is told offset 1: the retry's copy
    assert _high_watermark(cluster, topic_name) == 2
    batches = _batches_on_disk(cluster, topic_name)
    assert len(batches) == 2 and all("producerId: -1" in b and "baseSequence: -1" in b for b in batches)
    produce = proxy.trace(client_id=cid).where(api="Produce")
    assert [r["fate"] for r in produce] == ["response dropped by proxy, connection closed", "forwarded"]
    assert [r["response"]["items"][0]["base_offset"] for r in produce] == [0, 1]


def test_lost_ack_with_idempotence_is_deduplicated(cluster, proxy, topic_name):
    cid = f"idem-{uuid.uuid4().hex[:8]}"
    reports = _lose_first_ack(cluster, proxy, topic_name, cid)
    assert reports == [(None, 0)]
    assert _high_watermark(cluster, topic_name) == 1
    batches = _batches_on_disk(cluster, topic_name)
    assert len(batches) == 1 and "baseSequence: 0" in batches[0]
    produce = proxy.trace(client_id=cid).where(api="Produce")
    assert len(produce) == 2
    first, retry = (r["request"]["items"][0] for r in produce)
    key = ("producer_id", "producer_epoch", "base_sequence", "last_sequence")
    assert [first[k] for k in key] == [retry[k] for k in key] and first["producer_id"] >= 0
    assert first["base_sequence"] == 0
    # The broker found (first, last sequence) among the producer's last 5 batches: no write, ORIGINAL offset.
    answers = [r["response"]["items"][0] for r in produce]
    assert [(a["error"], a["base_offset"]) for a in answers] == [("NONE", 0), ("NONE", 0)]
    assert produce[0]["fate"].startswith("response dropped") and produce[1]["fate"] == "forwarded"
    pid = re.search(r"producerId: (\d+)", batches[0])
    assert pid is not None and int(pid.group(1)) == first["producer_id"]
