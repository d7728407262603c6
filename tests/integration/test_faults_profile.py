"""The demo producer profile's claims about librdkafka, checked on the real cluster.

(The third claim, message.timeout.ms running out first -> _MSG_TIMED_OUT and an
epoch bump, is asserted in test_faults_replay.py, which needs that older epoch.)
"""

from __future__ import annotations

import uuid

import pytest
from _timing import SLACK, slowest
from confluent_kafka import Producer

from eoslab._wait import wait_until
from eoslab.faults import DEMO_PRODUCER, Proxy, demo_producer_config

pytestmark = pytest.mark.cluster

TIMEOUT_SCAN_S = 1.0
"""librdkafka looks for timed-out requests once a second (rd_kafka_broker_timeout_scan, every 1000 ms)."""


def _producer(cluster, topic: str, cid: str, **conf) -> Producer:
    cluster.admin.create_topic(topic, partitions=1)
    return Producer(demo_producer_config(cluster.bootstrap_servers(proxied=True), cid, **conf))


def _produce_times(proxy: Proxy, cid: str) -> list[tuple[float, int, int]]:
    return [
        (r["time"], r["request"]["items"][0]["base_sequence"], r["request"]["items"][0]["producer_epoch"])
        for r in proxy.trace(client_id=cid, api="Produce")
    ]


def test_lost_ack_is_resent_after_socket_timeout_on_a_new_connection(cluster, proxy, topic_name):
    cid = f"prof-sock-{uuid.uuid4().hex[:8]}"
    producer = _producer(cluster, topic_name, cid)  # socket.timeout.ms=3000, message.timeout.ms=30000
    # The baseline: a Metadata round trip of this very client through the proxy, under this moment's load.
    baseline = slowest(lambda: producer.list_topics(topic_name, timeout=10))
    reports: list[tuple] = []
    with proxy.drop_response(api="Produce", client_id=cid):
        producer.produce(topic_name, b"a", on_delivery=lambda e, m: reports.append((e, m.offset())))
        assert producer.flush(30) == 0
    assert reports == [(None, 0)]
    (t0, seq0, ep0), (t1, seq1, ep1) = _produce_times(proxy, cid)
    assert (seq0, ep0) == (seq1, ep1) == (0, 0)
    # librdkafka scans for timed-out requests once a second: the resend follows the 3 s timeout within
    # one scan, plus the resend's own trip to the proxy (the baseline's worth, with slack for a busy box).
    socket_timeout = DEMO_PRODUCER["socket.timeout.ms"] / 1000
    assert socket_timeout <= t1 - t0 < socket_timeout + TIMEOUT_SCAN_S + SLACK * baseline, (t1 - t0, baseline)
    rows = proxy.trace(client_id=cid)
    conns = {r["conn"] for r in rows if r["api"] == "Produce"}
    assert len(conns) == 2  # librdkafka closed the timed-out connection and resent on a new one


def test_a_later_batch_acked_first_does_not_complete_the_earlier_one(cluster, proxy, topic_name):
    """librdkafka 2.16 keeps the earlier batch in flight until its own timeout, then resends it."""
    cid = f"prof-later-{uuid.uuid4().hex[:8]}"
    producer = _producer(cluster, topic_name, cid)
    reports: list[tuple] = []
    with proxy.drop_response(api="Produce", client_id=cid) as fault:
        producer.produce(topic_name, b"1", on_delivery=lambda e, m: reports.append((m.value(), e, m.offset())))
        wait_until(lambda: producer.poll(0.05) is not None and fault.fired, timeout=10, what="batch 1 sent")
        producer.produce(topic_name, b"2", on_delivery=lambda e, m: reports.append((m.value(), e, m.offset())))
        wait_until(lambda: producer.poll(0.05) is not None and reports, timeout=10, what="batch 2 acked")
        assert reports == [(b"2", None, 1)]  # batch 2 (seq 1) acked; batch 1 is NOT reported delivered yet
        assert producer.flush(30) == 0
    assert reports == [(b"2", None, 1), (b"1", None, 0)]
    assert [(s, e) for _, s, e in _produce_times(proxy, cid)] == [(0, 0), (1, 0), (0, 0)]
