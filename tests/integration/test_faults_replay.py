"""A duplicate from the network: the proxy resends a captured Produce, and the leader judges it.

What the broker does with a repeated batch of an idempotent producer
(apache/kafka 4.1, storage module, ``org.apache.kafka.storage.internals.log``):

- ``UnifiedLog.analyzeAndValidateProducerState`` first asks
  ``ProducerStateEntry.findDuplicateBatch``: same epoch and the same
  (first, last sequence) as one of the last ``NUM_BATCHES_TO_RETAIN = 5``
  batches -> nothing is appended, the ORIGINAL offsets are returned, error NONE.
- Otherwise ``ProducerAppendInfo.checkProducerEpoch``: an epoch below the
  partition's last seen epoch -> ``InvalidProducerEpochException``,
  INVALID_PRODUCER_EPOCH (47) ("Starting from 2.7, we replaced ProducerFenced
  error with InvalidProducerEpoch").
- Then ``ProducerAppendInfo.checkSequence``: same epoch, first sequence not
  last + 1 -> ``OutOfOrderSequenceException``, OUT_OF_ORDER_SEQUENCE_NUMBER (45).

The older epoch is produced honestly: librdkafka bumps its own epoch (KIP-360)
when a message times out with its fate unknown (here: its ack is dropped and
``message.timeout.ms`` runs out first).
"""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from eoslab.faults import FaultRuleError, demo_producer_config

pytestmark = pytest.mark.cluster


def _hw(cluster, topic: str) -> int:
    c = Consumer({"bootstrap.servers": cluster.bootstrap_servers(), "group.id": f"hw-{uuid.uuid4().hex[:6]}"})
    try:
        return c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
    finally:
        c.close()


def _producer(cluster, topic: str, client_id: str, **conf) -> Producer:
    cluster.admin.create_topic(topic, partitions=1)
    return Producer(demo_producer_config(cluster.bootstrap_servers(proxied=True), client_id, **conf))


def _send(producer: Producer, topic: str, n: int = 1) -> list[tuple]:
    """``n`` batches of one record each: flush after each, so each is its own batch and sequence."""
    out: list[tuple] = []
    for i in range(n):
        producer.produce(topic, f"m{i}".encode(), on_delivery=lambda e, m: out.append((e and e.name(), m.offset())))
        assert producer.flush(30) == 0
    return out


def test_replay_within_the_last_five_batches_returns_the_original_offset(cluster, proxy, topic_name):
    cid = f"rp-win-{uuid.uuid4().hex[:8]}"
    producer = _producer(cluster, topic_name, cid)
    assert _send(producer, topic_name, 3) == [(None, 0), (None, 1), (None, 2)]
    answer = proxy.replay(client_id=cid, topic=topic_name, partition=0, base_sequence=1)
    item = answer["response"]["items"][0]
    assert (item["error_code"], item["base_offset"]) == (0, 1)  # original offset, nothing written
    assert answer["via"] == "proxy" and answer["request"]["items"][0]["base_sequence"] == 1
    assert _hw(cluster, topic_name) == 3
    # The client never saw it, but the trace did (scoped by the client's id).
    assert [r["via"] for r in proxy.trace(client_id=cid).where(api="Produce")] == ["client"] * 3 + ["proxy"]


def test_replay_older_than_the_window_is_out_of_order(cluster, proxy, topic_name):
    cid = f"rp-old-{uuid.uuid4().hex[:8]}"
    producer = _producer(cluster, topic_name, cid)
    _send(producer, topic_name, 7)  # sequences 0..6: the broker remembers 2..6
    answer = proxy.replay(client_id=cid, topic=topic_name, partition=0, base_sequence=0)
    item = answer["response"]["items"][0]
    assert (item["error_code"], item["error"]) == (45, "OUT_OF_ORDER_SEQUENCE_NUMBER")
    # The oldest batch still in the window is deduplicated.
    kept = proxy.replay(client_id=cid, topic=topic_name, partition=0, base_sequence=2)["response"]["items"][0]
    assert (kept["error_code"], kept["base_offset"]) == (0, 2)
    assert _hw(cluster, topic_name) == 7


def test_replay_from_an_older_epoch_is_rejected(cluster, proxy, topic_name):
    cid = f"rp-epoch-{uuid.uuid4().hex[:8]}"
    # message.timeout.ms far below socket.timeout.ms: a lost ack makes the message time out first.
    producer = _producer(cluster, topic_name, cid, **{"message.timeout.ms": 2000, "socket.timeout.ms": 60000})
    assert _send(producer, topic_name) == [(None, 0)]
    with proxy.drop_response(api="Produce", client_id=cid):
        assert _send(producer, topic_name) == [("_MSG_TIMED_OUT", None)]  # ...although it IS on disk, offset 1
    assert _send(producer, topic_name) == [(None, 2)]
    epochs = [
        (r["request"]["items"][0]["producer_epoch"], r["request"]["items"][0]["base_sequence"])
        for r in proxy.trace(client_id=cid).where(api="Produce")
    ]
    assert epochs == [(0, 0), (0, 1), (1, 0)]  # KIP-360: same producer id, epoch + 1, sequence back to 0
    answer = proxy.replay(client_id=cid, topic=topic_name, partition=0, producer_epoch=0, base_sequence=0)
    item = answer["response"]["items"][0]
    assert (item["error_code"], item["error"]) == (47, "INVALID_PRODUCER_EPOCH")
    assert _hw(cluster, topic_name) == 3


def test_replay_of_nothing_captured_says_so(proxy):
    with pytest.raises(FaultRuleError, match="No captured Produce request matches"):
        proxy.replay(client_id=f"nobody-{uuid.uuid4().hex[:6]}")
