"""The trace's protocol summaries: one entry per API in a table, each checked on frames through the real codec.

Frames are encoded with the pinned schemas and decoded back, as the proxy does
with what passes it, at the versions the course's two clients speak: librdkafka
(AddPartitionsToTxn v0-3, EndTxn v0-1, Produce with topic names) and the Java
4.x client (transaction.version 2: EndTxn v5 answers with a bumped epoch,
Produce v13 names topics only by id).
"""

from __future__ import annotations

import uuid
from typing import Any

from _kafka_bytes import batch, record

from eoslab import protocol
from eoslab.faults._summary import (
    DECODED_RESPONSES,
    EOS_API_KEYS,
    EOS_API_NAMES,
    SUMMARIZERS,
    summarize_request,
    summarize_response,
)

TOPIC_ID = uuid.UUID("4d7c1a52-0b0e-4b8e-9a57-1d0f2f6e6a01")


def request(api: str, version: int, body: dict[str, Any]) -> protocol.Request:
    return protocol.decode_request(protocol.encode_request(api, version, 7, "summary-test", body)[4:])


def response(api: str, version: int, body: dict[str, Any]) -> protocol.Response:
    return protocol.decode_response(protocol.encode_response(api, version, 7, body)[4:], api, version)


def test_the_table_decides_which_requests_and_responses_the_proxy_decodes(schemas: protocol.Schemas) -> None:
    names = {k: schemas.requests[k].api_name for k in SUMMARIZERS}
    assert sorted(names[k] for k in EOS_API_KEYS) == sorted(
        ["Produce", "Fetch", "FindCoordinator", "InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn"]
        + ["EndTxn", "TxnOffsetCommit"]
    )
    assert sorted(names[k] for k in DECODED_RESPONSES - EOS_API_KEYS) == ["ApiVersions", "Metadata"]
    assert EOS_API_NAMES == {names[k] for k in EOS_API_KEYS} - {"Fetch"}  # the diagrams leave polls out


def test_produce_v13_names_its_topic_by_id_once_a_metadata_answer_named_it() -> None:
    idempotent = batch([record(None, b"a"), record(None, b"b", 1)], producer_id=1037, producer_epoch=2, base_sequence=5)
    plain = batch([record(None, b"c")])
    body = {
        "TransactionalId": None,
        "Acks": -1,
        "TimeoutMs": 30000,
        "TopicData": [
            {"TopicId": TOPIC_ID, "PartitionData": [{"Index": 1, "Records": idempotent}]},
            {"TopicId": uuid.UUID(int=5), "PartitionData": [{"Index": 0, "Records": plain}]},
        ],
    }
    summary = summarize_request(request("Produce", 13, body), {TOPIC_ID: "demo"})
    assert summary == {
        "transactional_id": None,
        "acks": -1,
        "items": [
            {
                "topic": "demo",
                "partition": 1,
                "producer_id": 1037,
                "producer_epoch": 2,
                "base_sequence": 5,
                "last_sequence": 6,
                "record_count": 2,
                "transactional": False,
            },
            {
                "topic": f"id:{uuid.UUID(int=5)}",  # no relayed Metadata answer named it yet
                "partition": 0,
                "producer_id": -1,
                "producer_epoch": -1,
                "base_sequence": -1,
                "last_sequence": -1,
                "record_count": 1,
                "transactional": False,
            },
        ],
    }
    answer = {
        "Responses": [
            {"TopicId": TOPIC_ID, "PartitionResponses": [{"Index": 1, "ErrorCode": 0, "BaseOffset": 40}]},
            {"TopicId": uuid.UUID(int=5), "PartitionResponses": [{"Index": 0, "ErrorCode": 45, "BaseOffset": -1}]},
        ]
    }
    out = summarize_response(response("Produce", 13, answer), summary, {TOPIC_ID: "demo"})
    assert out["items"][0] == {"topic": "demo", "partition": 1, "error_code": 0, "error": "NONE", "base_offset": 40}
    assert (out["error_code"], out["error"]) == (45, "OUT_OF_ORDER_SEQUENCE_NUMBER")  # the first non-zero one


def test_add_partitions_to_txn_reads_the_same_from_librdkafkas_v3_and_the_brokers_v4() -> None:
    ids = {"TransactionalId": "tx-1", "ProducerId": 1037, "ProducerEpoch": 0}
    topics = [{"Name": "demo", "Partitions": [0, 1]}]
    v3 = request(
        "AddPartitionsToTxn",
        3,
        {f"V3AndBelow{k}": v for k, v in {**ids, "Topics": topics}.items()},
    )
    v4 = request("AddPartitionsToTxn", 4, {"Transactions": [{**ids, "VerifyOnly": True, "Topics": topics}]})
    expected = {
        "transactional_id": "tx-1",
        "producer_id": 1037,
        "producer_epoch": 0,
        "items": [
            {"transactional_id": "tx-1", "producer_id": 1037, "producer_epoch": 0, "topic": "demo", "partition": p}
            for p in (0, 1)
        ],
    }
    assert summarize_request(v3, {}) == summarize_request(v4, {}) == expected
    partitions = [{"PartitionIndex": 0, "PartitionErrorCode": 0}, {"PartitionIndex": 1, "PartitionErrorCode": 51}]
    results = [{"Name": "demo", "ResultsByPartition": partitions}]
    old = summarize_response(response("AddPartitionsToTxn", 3, {"ResultsByTopicV3AndBelow": results}), expected, {})
    new = summarize_response(
        response(
            "AddPartitionsToTxn", 4, {"ResultsByTransaction": [{"TransactionalId": "tx-1", "TopicResults": results}]}
        ),
        expected,
        {},
    )
    assert old == new
    assert [i["error"] for i in old["items"]] == ["NONE", "CONCURRENT_TRANSACTIONS"]
    assert old["error"] == "CONCURRENT_TRANSACTIONS"


def test_find_coordinator_v3_answers_for_the_key_the_request_named() -> None:
    asked = summarize_request(request("FindCoordinator", 3, {"Key": "tx-1", "KeyType": 1}), {})
    assert asked == {"key_type": "transaction", "keys": ["tx-1"]}
    answer = {"ErrorCode": 0, "NodeId": 3, "Host": "localhost", "Port": 9092}
    out = summarize_response(response("FindCoordinator", 3, answer), asked, {})
    assert out == {
        "items": [{"key": "tx-1", "node_id": 3, "error_code": 0, "error": "NONE"}],
        "error_code": 0,
        "error": "NONE",
    }


def test_find_coordinator_v4_answers_per_key_and_the_first_error_is_the_answers() -> None:
    asked = summarize_request(request("FindCoordinator", 4, {"KeyType": 0, "CoordinatorKeys": ["g1", "g2"]}), {})
    assert asked == {"key_type": "group", "keys": ["g1", "g2"]}
    coordinators = [
        {"Key": "g1", "NodeId": 1, "Host": "h", "Port": 1, "ErrorCode": 0},
        {"Key": "g2", "NodeId": -1, "Host": "", "Port": -1, "ErrorCode": 14},
    ]
    out = summarize_response(response("FindCoordinator", 4, {"Coordinators": coordinators}), asked, {})
    assert [(i["key"], i["node_id"], i["error"]) for i in out["items"]] == [
        ("g1", 1, "NONE"),
        ("g2", -1, "COORDINATOR_LOAD_IN_PROGRESS"),
    ]
    assert out["error_code"] == 14


def test_init_producer_id_v0_asks_without_an_id_and_is_granted_one() -> None:
    asked = summarize_request(request("InitProducerId", 0, {"TransactionalId": "tx-1", "TransactionTimeoutMs": 1}), {})
    assert asked == {"transactional_id": "tx-1", "producer_id": -1, "producer_epoch": -1}
    granted = summarize_response(response("InitProducerId", 0, {"ProducerId": 1037, "ProducerEpoch": 0}), asked, {})
    assert granted == {"producer_id": 1037, "producer_epoch": 0, "error_code": 0, "error": "NONE"}


def test_end_txn_v5_answers_with_the_bumped_epoch_and_v1_without_one() -> None:
    ids = {"TransactionalId": "tx-1", "ProducerId": 1037, "ProducerEpoch": 4}
    v1 = summarize_request(request("EndTxn", 1, {**ids, "Committed": False}), {})
    assert v1 == {"transactional_id": "tx-1", "producer_id": 1037, "producer_epoch": 4, "committed": False}
    assert summarize_response(response("EndTxn", 1, {"ErrorCode": 47}), v1, {}) == {
        "error_code": 47,
        "error": "INVALID_PRODUCER_EPOCH",
    }
    v5 = summarize_request(request("EndTxn", 5, {**ids, "Committed": True}), {})
    bumped = summarize_response(response("EndTxn", 5, {"ProducerId": 1037, "ProducerEpoch": 5}), v5, {})
    assert bumped == {"producer_id": 1037, "producer_epoch": 5, "error_code": 0, "error": "NONE"}


def test_offsets_join_the_transaction_by_group_then_by_partition() -> None:
    ids = {"TransactionalId": "tx-1", "ProducerId": 1037, "ProducerEpoch": 0, "GroupId": "g"}
    add = summarize_request(request("AddOffsetsToTxn", 1, ids), {})
    assert add == {"transactional_id": "tx-1", "producer_id": 1037, "producer_epoch": 0, "group_id": "g"}
    assert summarize_response(response("AddOffsetsToTxn", 1, {"ErrorCode": 0}), add, {}) == {
        "error_code": 0,
        "error": "NONE",
    }
    topics = [{"Name": "in", "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 12}]}]
    member = {"MemberId": "m-1", "GenerationIdOrMemberEpoch": 4}  # the group metadata KIP-447 checks (v3+)
    commit = summarize_request(request("TxnOffsetCommit", 3, {**ids, **member, "Topics": topics}), {})
    assert commit == {
        **add,
        "member_id": "m-1",
        "generation": 4,
        "items": [{"topic": "in", "partition": 0, "offset": 12}],
    }
    # v6 (KIP-1319, the Java 4.4 client) names the topic by id: the trace names it from relayed Metadata
    tid = uuid.UUID(int=7)
    by_id = [{"TopicId": tid, "Partitions": [{"PartitionIndex": 0, "CommittedOffset": 12}]}]
    v6 = summarize_request(request("TxnOffsetCommit", 6, {**ids, **member, "Topics": by_id}), {tid: "in"})
    assert v6["items"] == commit["items"]
    answer = {"Topics": [{"Name": "in", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 47}]}]}
    out = summarize_response(response("TxnOffsetCommit", 3, answer), commit, {})
    assert out == {
        "items": [{"topic": "in", "partition": 0, "error_code": 47, "error": "INVALID_PRODUCER_EPOCH"}],
        "error_code": 47,
        "error": "INVALID_PRODUCER_EPOCH",
    }


def test_apis_the_trace_does_not_open_carry_only_their_error() -> None:
    beat = request("Heartbeat", 4, {"GroupId": "g", "GenerationId": 1, "MemberId": "m"})
    assert summarize_request(beat, {}) == {}
    assert summarize_response(response("Heartbeat", 4, {"ErrorCode": 27}), {}, {}) == {
        "error_code": 27,
        "error": "REBALANCE_IN_PROGRESS",
    }
    assert summarize_request(request("Metadata", 12, {"Topics": None}), {}) == {}  # read for its answer only
    topics = [{"Name": "a", "TopicId": TOPIC_ID, "Partitions": []}, {"Name": "b", "Partitions": []}]
    assert summarize_response(response("Metadata", 12, {"Topics": topics}), {}, {}) == {
        "topics": 2,
        "error_code": 0,
        "error": "NONE",
    }
