"""The protocol trace of a librdkafka transaction, on the real cluster."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from eoslab.faults import Proxy, demo_producer_config, ensure_proxy

pytestmark = pytest.mark.cluster

RETRIED = {
    "CONCURRENT_TRANSACTIONS",  # 51: the coordinator still completes this id's previous state change
    "COORDINATOR_LOAD_IN_PROGRESS",  # 14: the coordinator loads its __transaction_state / __consumer_offsets
    "NOT_COORDINATOR",  # 16: the coordinator moved (a leader change of its partition)
    "COORDINATOR_NOT_AVAILABLE",  # 15
    "UNKNOWN_TOPIC_OR_PARTITION",  # 3: a broker has not yet learned of the topic just created
    "NOT_LEADER_OR_FOLLOWER",  # 6: likewise, of its leader
}
"""Errors Kafka marks retriable that librdkafka retries on the EOS requests (org.apache.kafka.common.errors)."""


def run_transaction(cluster, topic: str, client_id: str, group: str) -> None:
    """init, begin, one record to each of 2 partitions, offsets of a consumer group, commit."""
    cluster.admin.create_topic(topic, partitions=2)
    bootstrap = cluster.bootstrap_servers(proxied=True)
    producer = Producer(demo_producer_config(bootstrap, client_id, **{"transactional.id": f"{client_id}-txn"}))
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": f"{client_id}-in",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        producer.init_transactions(30)
        producer.begin_transaction()
        for p in (0, 1):
            producer.produce(topic, f"r{p}".encode(), partition=p)
        producer.send_offsets_to_transaction([TopicPartition(topic, 0, 1)], consumer.consumer_group_metadata(), 30)
        producer.commit_transaction(30)
    finally:
        consumer.close()


def test_transaction_trace_shows_every_eos_request(cluster, topic_name):
    ensure_proxy(cluster)
    proxy = Proxy(cluster.topology)
    cid = f"trace-{uuid.uuid4().hex[:8]}"
    run_transaction(cluster, topic_name, cid, f"{cid}-group")
    rows = proxy.trace(client_id=cid)
    eos = [r for r in rows if r["api"] != "Metadata" and r["api"] != "ApiVersions"]
    apis = [r["api"] for r in eos]
    for api in (
        "FindCoordinator",
        "InitProducerId",
        "AddPartitionsToTxn",
        "Produce",
        "AddOffsetsToTxn",
        "TxnOffsetCommit",
        "EndTxn",
    ):
        assert api in apis, apis
    assert apis.index("InitProducerId") < apis.index("AddPartitionsToTxn") < apis.index("EndTxn")
    # Every EOS request ends answered NONE. On the way a broker may refuse one with an error Kafka marks
    # retriable, which librdkafka retries: seen in a fresh-clone run and right after `eoslab up`, an
    # InitProducerId answered COORDINATOR_LOAD_IN_PROGRESS by a coordinator that had no producer-id block
    # yet. Anything else is a failure.
    answered = [(r["api"], (r.get("response") or {}).get("error")) for r in eos if r["api"] != "FindCoordinator"]
    refused = [(api, err) for api, err in answered if err != "NONE"]
    assert all(err in RETRIED for _, err in refused), refused
    last = {api: err for api, err in answered}
    assert all(err == "NONE" for err in last.values()), last
    # the id librdkafka got: a broker that has no producer-id block yet (just started) answers
    # COORDINATOR_LOAD_IN_PROGRESS with id -1 while it asks the controller for one (AllocateProducerIds)
    init = next(r for r in eos if r["api"] == "InitProducerId" and r["response"]["error"] == "NONE")
    pid, epoch = init["response"]["producer_id"], init["response"]["producer_epoch"]
    produce_items = [i for r in eos if r["api"] == "Produce" for i in r["request"]["items"]]
    assert {(i["partition"], i["producer_id"], i["producer_epoch"], i["transactional"]) for i in produce_items} == {
        (0, pid, epoch, True),
        (1, pid, epoch, True),
    }
    added = next(r for r in eos if r["api"] == "AddPartitionsToTxn")
    assert {(i["topic"], i["partition"]) for i in added["request"]["items"]} == {(topic_name, 0), (topic_name, 1)}
    assert next(r for r in eos if r["api"] == "AddOffsetsToTxn")["request"]["group_id"] == f"{cid}-group"
    assert next(r for r in eos if r["api"] == "TxnOffsetCommit")["request"]["items"] == [
        {"topic": topic_name, "partition": 0, "offset": 1}
    ]
    end = next(r for r in eos if r["api"] == "EndTxn")
    assert end["request"]["committed"] is True and end["version"] <= 1  # librdkafka: the original protocol
    diagram = rows.mermaid()
    assert diagram.startswith("sequenceDiagram") and "EndTxn" in diagram and "COMMIT" in diagram
    df = rows.frame()
    assert set(df[df.api == "Produce"].partition) == {0, 1}


def test_acks_zero_produce_has_no_response_in_the_trace(cluster, topic_name):
    ensure_proxy(cluster)
    proxy = Proxy(cluster.topology)
    cluster.admin.create_topic(topic_name, partitions=1)
    cid = f"acks0-{uuid.uuid4().hex[:8]}"
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers(proxied=True), "client.id": cid, "acks": 0, "linger.ms": 0}
    )
    producer.produce(topic_name, b"fire and forget")
    assert producer.flush(30) == 0
    (row,) = proxy.trace(client_id=cid, api="Produce")
    assert row["request"]["acks"] == 0 and row["fate"] == "no response (acks=0)" and row["response"] is None
    assert row["request"]["items"][0]["producer_id"] == -1  # no idempotence without acks=all
