"""eoslab.protocol: body codec over every schema of the pinned jar, plus the EOS APIs populated."""

from __future__ import annotations

import base64
import random
import struct
import uuid
from typing import Any

import pytest

from eoslab import protocol
from eoslab.protocol import (
    UNKNOWN_TAGGED_FIELDS,
    FieldSpec,
    MessageSpec,
    Schemas,
    decode,
    default_message,
    encode,
)


def _all_specs() -> list[MessageSpec]:
    try:
        s = protocol.default_schemas()
    except protocol.JarNotFoundError:
        return []
    return [*s.requests.values(), *s.responses.values(), s.request_header, s.response_header]


def _roundtrip(spec: MessageSpec, version: int, value: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    data = encode(spec, version, value)
    decoded, end = decode(spec, version, data)
    assert end == len(data)
    assert encode(spec, version, decoded) == data
    return data, decoded


# ---------------------------------------------------------------- every spec, every version

_INT_RANGES = {"int8": 7, "int16": 15, "int32": 31, "int64": 63}


def _random_value(f: FieldSpec, version: int, rng: random.Random, depth: int = 0) -> Any:
    nullable = version in f.nullable_versions
    if nullable and rng.random() < 0.25:
        return None
    if f.is_array:
        return [_random_element(f, version, rng, depth) for _ in range(rng.randint(0, 2 if depth < 3 else 0))]
    return _random_element(f, version, rng, depth)


def _random_element(f: FieldSpec, version: int, rng: random.Random, depth: int) -> Any:
    t = f.element_type
    if f.is_struct:
        return _random_struct(f.fields, version, rng, depth + 1, flexible=False)
    if t == "bool":
        return rng.random() < 0.5
    if t in _INT_RANGES:
        bits = _INT_RANGES[t]
        return rng.randint(-(1 << bits), (1 << bits) - 1)
    if t == "uint16":
        return rng.randint(0, 0xFFFF)
    if t == "uint32":
        return rng.randint(0, 0xFFFFFFFF)
    if t == "float64":
        return rng.uniform(-1e9, 1e9)
    if t == "string":
        return "".join(rng.choice("abcxyz-._é€") for _ in range(rng.randint(0, 12)))
    if t in ("bytes", "records"):
        return rng.randbytes(rng.randint(0, 20))
    if t == "uuid":
        return uuid.UUID(int=rng.getrandbits(128))
    raise AssertionError(t)


def _random_struct(
    fields: tuple[FieldSpec, ...], version: int, rng: random.Random, depth: int, flexible: bool
) -> dict[str, Any]:
    value = {f.name: _random_value(f, version, rng, depth) for f in fields if version in f.versions}
    if flexible and rng.random() < 0.3:
        value[UNKNOWN_TAGGED_FIELDS] = {90 + rng.randint(0, 5): rng.randbytes(3)}
    return value


@pytest.mark.parametrize("spec", _all_specs(), ids=lambda s: s.name)
def test_every_version_roundtrips_defaults_and_random_values(spec: MessageSpec) -> None:
    rng = random.Random(spec.name)
    for version in spec.versions:
        data, decoded = _roundtrip(spec, version, {})
        assert decoded == default_message(spec, version)
        for _ in range(3):
            value = _random_struct(spec.fields, version, rng, 0, spec.is_flexible(version))
            _, decoded = _roundtrip(spec, version, value)
            assert decoded == value, (spec.name, version)


def test_the_jar_has_every_api_both_ways(schemas: Schemas) -> None:
    assert len(schemas.requests) == len(schemas.responses) >= 90
    assert schemas.api_names[0] == "Produce"
    assert {22: "InitProducerId", 24: "AddPartitionsToTxn", 26: "EndTxn"}.items() <= schemas.api_names.items()


def test_removed_apis_are_known_but_unusable(schemas: Schemas) -> None:
    removed = {k for k, spec in schemas.requests.items() if not spec.versions}
    assert {4, 5, 6, 7} <= removed  # LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown: "none"
    with pytest.raises(protocol.UnsupportedApiError, match="valid: none"):
        encode(schemas.request("LeaderAndIsr"), 0, {})


# ---------------------------------------------------------------- EOS APIs, populated

TOPIC_ID = uuid.UUID("6d0f5b5e-1a63-4c83-9d0e-0c1c3f1a2b3c")
BATCH = bytes(range(70))


def _produce(version: int) -> dict[str, Any]:
    topic: dict[str, Any] = {"PartitionData": [{"Index": 0, "Records": BATCH}, {"Index": 1, "Records": None}]}
    topic["TopicId" if version >= 13 else "Name"] = TOPIC_ID if version >= 13 else "orders"
    return {"TransactionalId": "tx-1", "Acks": -1, "TimeoutMs": 30000, "TopicData": [topic]}


@pytest.mark.parametrize("version", [3, 9, 10, 12, 13])
def test_produce_request_populated(schemas: Schemas, version: int) -> None:
    value = _produce(version)
    data, decoded = _roundtrip(schemas.request("Produce"), version, value)
    assert decoded == value
    assert BATCH in data
    topic = decoded["TopicData"][0]
    assert ("TopicId" in topic) == (version >= 13) and ("Name" in topic) == (version < 13)


@pytest.mark.parametrize("version", [3, 9, 10, 12, 13])
def test_produce_response_populated(schemas: Schemas, version: int) -> None:
    spec = schemas.response("Produce")
    partition = {
        "Index": 2,
        "ErrorCode": 0,
        "BaseOffset": 41,
        "LogAppendTimeMs": -1,
        "LogStartOffset": 0,
        "RecordErrors": [{"BatchIndex": 0, "BatchIndexErrorMessage": None}],
        "ErrorMessage": "boom",
    }
    if version >= 10:  # tagged CurrentLeader, written because it differs from its default
        partition["CurrentLeader"] = {"LeaderId": 3, "LeaderEpoch": 7}
    topic = {
        "PartitionResponses": [partition],
        ("TopicId" if version >= 13 else "Name"): TOPIC_ID if version >= 13 else "orders",
    }
    value = {"Responses": [topic], "ThrottleTimeMs": 0}
    if version >= 10:
        value["NodeEndpoints"] = [{"NodeId": 3, "Host": "b3", "Port": 9094, "Rack": None}]
    _, decoded = _roundtrip(spec, version, value)
    got = decoded["Responses"][0]["PartitionResponses"][0]
    assert got["BaseOffset"] == 41
    assert got.get("RecordErrors", partition["RecordErrors"]) == partition["RecordErrors"]  # v8+
    if version >= 10:
        assert got["CurrentLeader"] == {"LeaderId": 3, "LeaderEpoch": 7}
        assert decoded["NodeEndpoints"][0]["Host"] == "b3"


@pytest.mark.parametrize("version", range(0, 7))
def test_init_producer_id_populated(schemas: Schemas, version: int) -> None:
    request = {
        "TransactionalId": "tx-1",
        "TransactionTimeoutMs": 60000,
        "ProducerId": 1000,
        "ProducerEpoch": 4,
        "Enable2Pc": True,
        "KeepPreparedTxn": False,
    }
    _, decoded = _roundtrip(schemas.request("InitProducerId"), version, request)
    assert decoded["TransactionalId"] == "tx-1"
    assert ("ProducerId" in decoded) == (version >= 3)
    _, decoded = _roundtrip(schemas.request("InitProducerId"), version, {"TransactionalId": None})
    assert decoded["TransactionalId"] is None  # idempotent-only producer
    response = {"ErrorCode": 0, "ProducerId": 1000, "ProducerEpoch": 5, "OngoingTxnProducerId": 999}
    _, decoded = _roundtrip(schemas.response("InitProducerId"), version, response)
    assert (decoded["ProducerId"], decoded["ProducerEpoch"]) == (1000, 5)


@pytest.mark.parametrize("version", range(0, 6))
def test_add_partitions_to_txn_both_shapes(schemas: Schemas, version: int) -> None:
    topics = [{"Name": "orders", "Partitions": [0, 1, 2]}, {"Name": "audit", "Partitions": []}]
    if version <= 3:
        value: dict[str, Any] = {
            "V3AndBelowTransactionalId": "tx-1",
            "V3AndBelowProducerId": 7,
            "V3AndBelowProducerEpoch": 1,
            "V3AndBelowTopics": topics,
        }
    else:
        value = {
            "Transactions": [
                {
                    "TransactionalId": f"tx-{i}",
                    "ProducerId": 7 + i,
                    "ProducerEpoch": 1,
                    "VerifyOnly": i == 1,
                    "Topics": topics,
                }
                for i in range(2)
            ]
        }
    _, decoded = _roundtrip(schemas.request("AddPartitionsToTxn"), version, value)
    assert decoded == value
    result = [{"Name": "orders", "ResultsByPartition": [{"PartitionIndex": 0, "PartitionErrorCode": 0}]}]
    if version <= 3:
        response: dict[str, Any] = {"ThrottleTimeMs": 0, "ResultsByTopicV3AndBelow": result}
    else:
        response = {
            "ThrottleTimeMs": 0,
            "ErrorCode": 0,
            "ResultsByTransaction": [{"TransactionalId": "tx-0", "TopicResults": result}],
        }
    _, decoded = _roundtrip(schemas.response("AddPartitionsToTxn"), version, response)
    assert decoded == response


@pytest.mark.parametrize("version", range(0, 5))
def test_add_offsets_and_txn_offset_commit(schemas: Schemas, version: int) -> None:
    value = {"TransactionalId": "tx-1", "ProducerId": 7, "ProducerEpoch": 2, "GroupId": "g"}
    _, decoded = _roundtrip(schemas.request("AddOffsetsToTxn"), version, value)
    assert decoded == value
    commit = {
        "TransactionalId": "tx-1",
        "GroupId": "g",
        "ProducerId": 7,
        "ProducerEpoch": 2,
        "GenerationIdOrMemberEpoch": 3,  # "GenerationId" until 4.3: a KIP-848 member sends its epoch here
        "MemberId": "m-1",
        "GroupInstanceId": None,
        "Topics": [
            {
                "Name": "in",
                "Partitions": [
                    {"PartitionIndex": 0, "CommittedOffset": 42, "CommittedLeaderEpoch": 5, "CommittedMetadata": None}
                ],
            }
        ],
    }
    spec = schemas.request("TxnOffsetCommit")
    _, decoded = _roundtrip(spec, version, commit)
    assert decoded["Topics"][0]["Partitions"][0]["CommittedOffset"] == 42
    assert ("MemberId" in decoded) == (version >= 3)


@pytest.mark.parametrize("version", range(0, 6))
def test_end_txn(schemas: Schemas, version: int) -> None:
    value = {"TransactionalId": "tx-1", "ProducerId": 7, "ProducerEpoch": 2, "Committed": True}
    _, decoded = _roundtrip(schemas.request("EndTxn"), version, value)
    assert decoded == value
    _, decoded = _roundtrip(schemas.response("EndTxn"), version, {"ErrorCode": 48, "ProducerEpoch": 3})
    assert decoded["ErrorCode"] == 48
    assert decoded.get("ProducerEpoch", 3) == 3 and decoded.get("ProducerId", -1) == -1


@pytest.mark.parametrize("version", range(0, 7))
def test_find_coordinator_single_and_batched(schemas: Schemas, version: int) -> None:
    request = {"Key": "tx-1", "KeyType": 1, "CoordinatorKeys": ["tx-1", "tx-2"]}
    _, decoded = _roundtrip(schemas.request("FindCoordinator"), version, request)
    if version <= 3:
        assert decoded["Key"] == "tx-1" and "CoordinatorKeys" not in decoded
    else:
        assert decoded["CoordinatorKeys"] == ["tx-1", "tx-2"] and "Key" not in decoded
    coordinators = [{"Key": "tx-1", "NodeId": 2, "Host": "b2", "Port": 9093, "ErrorCode": 0, "ErrorMessage": None}]
    response = {
        "ThrottleTimeMs": 0,
        "ErrorCode": 0,
        "ErrorMessage": None,
        "NodeId": 2,
        "Host": "b2",
        "Port": 9093,
        "Coordinators": coordinators,
    }
    _, decoded = _roundtrip(schemas.response("FindCoordinator"), version, response)
    assert (decoded["Coordinators"] == coordinators) if version >= 4 else (decoded["Host"] == "b2")


@pytest.mark.parametrize("version", range(0, 14))
def test_metadata(schemas: Schemas, version: int) -> None:
    request: dict[str, Any] = {"Topics": [{"TopicId": TOPIC_ID, "Name": "orders"}], "AllowAutoTopicCreation": False}
    _, decoded = _roundtrip(schemas.request("Metadata"), version, request)
    assert decoded["Topics"][0]["Name"] == "orders"
    if version >= 1:  # null = all topics
        assert _roundtrip(schemas.request("Metadata"), version, {"Topics": None})[1]["Topics"] is None
    partition = {
        "ErrorCode": 0,
        "PartitionIndex": 0,
        "LeaderId": 1,
        "LeaderEpoch": 4,
        "ReplicaNodes": [1, 2, 3],
        "IsrNodes": [1, 2],
        "OfflineReplicas": [],
    }
    response = {
        "Brokers": [{"NodeId": 1, "Host": "b1", "Port": 9092, "Rack": None}],
        "ClusterId": "c",
        "ControllerId": 1,
        "Topics": [
            {"ErrorCode": 0, "Name": "orders", "TopicId": TOPIC_ID, "IsInternal": False, "Partitions": [partition]}
        ],
    }
    _, decoded = _roundtrip(schemas.response("Metadata"), version, response)
    assert decoded["Topics"][0]["Partitions"][0]["ReplicaNodes"] == [1, 2, 3]


@pytest.mark.parametrize("version", range(0, 3))
def test_describe_quorum(schemas: Schemas, version: int) -> None:
    voter = {
        "ReplicaId": 1,
        "ReplicaDirectoryId": TOPIC_ID,
        "LogEndOffset": 100,
        "LastFetchTimestamp": 5,
        "LastCaughtUpTimestamp": 4,
    }
    partition = {
        "PartitionIndex": 0,
        "ErrorCode": 0,
        "ErrorMessage": None,
        "LeaderId": 1,
        "LeaderEpoch": 3,
        "HighWatermark": 99,
        "CurrentVoters": [voter],
        "Observers": [],
    }
    response = {
        "ErrorCode": 0,
        "ErrorMessage": None,
        "Topics": [{"TopicName": "__cluster_metadata", "Partitions": [partition]}],
        "Nodes": [{"NodeId": 1, "Listeners": [{"Name": "CONTROLLER", "Host": "c1", "Port": 65535}]}],
    }
    _, decoded = _roundtrip(schemas.response("DescribeQuorum"), version, response)
    got = decoded["Topics"][0]["Partitions"][0]["CurrentVoters"][0]
    assert got["LogEndOffset"] == 100 and ("ReplicaDirectoryId" in got) == (version >= 2)
    assert _roundtrip(
        schemas.request("DescribeQuorum"),
        version,
        {"Topics": [{"TopicName": "__cluster_metadata", "Partitions": [{"PartitionIndex": 0}]}]},
    )[1]["Topics"]


@pytest.mark.parametrize("version", range(0, 5))
def test_api_versions(schemas: Schemas, version: int) -> None:
    request = {"ClientSoftwareName": "eoslab", "ClientSoftwareVersion": "0.1"}
    _, decoded = _roundtrip(schemas.request("ApiVersions"), version, request)
    assert (decoded == request) if version >= 3 else (decoded == {})
    feature = "transaction.version"
    response = {
        "ErrorCode": 0,
        "ApiKeys": [{"ApiKey": 0, "MinVersion": 3, "MaxVersion": 13}],
        "ThrottleTimeMs": 0,
        "SupportedFeatures": [{"Name": feature, "MinVersion": 0, "MaxVersion": 2}],
        "FinalizedFeaturesEpoch": 12,
        "FinalizedFeatures": [{"Name": feature, "MaxVersionLevel": 2, "MinVersionLevel": 2}],
        "ZkMigrationReady": False,
    }
    _, decoded = _roundtrip(schemas.response("ApiVersions"), version, response)
    assert decoded["ApiKeys"] == response["ApiKeys"]
    if version >= 3:
        assert decoded == response


# ---------------------------------------------------------------- tagged fields, defaults, versions


def test_tagged_fields_only_written_when_not_default(schemas: Schemas) -> None:
    spec = schemas.response("ApiVersions")
    plain = encode(spec, 3, {})
    assert plain.endswith(b"\x00")  # no tagged field at all
    with_epoch = encode(spec, 3, {"FinalizedFeaturesEpoch": 5})
    assert with_epoch == plain[:-1] + b"\x01" + b"\x01\x08" + struct.pack(">q", 5)  # 1 field, tag 1, 8 bytes
    assert encode(spec, 3, {"FinalizedFeaturesEpoch": -1}) == plain  # -1 is the default


def test_unknown_tagged_fields_survive_a_roundtrip(schemas: Schemas) -> None:
    spec = schemas.request("EndTxn")
    value = {
        "TransactionalId": "t",
        "ProducerId": 1,
        "ProducerEpoch": 0,
        "Committed": False,
        UNKNOWN_TAGGED_FIELDS: {7: b"\x01\x02", 3: b""},
    }
    data, decoded = _roundtrip(spec, 4, value)
    assert decoded[UNKNOWN_TAGGED_FIELDS] == {3: b"", 7: b"\x01\x02"}
    assert data.endswith(b"\x02\x03\x00\x07\x02\x01\x02")  # two fields, ascending tags


def test_absent_fields_are_ignored_and_missing_fields_defaulted(schemas: Schemas) -> None:
    spec = schemas.request("InitProducerId")
    plain = encode(spec, 0, {"TransactionalId": None})
    assert encode(spec, 0, {"TransactionalId": None, "ProducerId": 5}) == plain  # ProducerId is v3+
    assert decode(spec, 3, encode(spec, 3, {}))[0] == {
        "TransactionalId": "",
        "TransactionTimeoutMs": 0,
        "ProducerId": -1,
        "ProducerEpoch": -1,
    }


def test_uuid_accepts_uuid_bytes_and_kafka_base64(schemas: Schemas) -> None:
    spec = schemas.request("Produce")
    as_uuid = encode(spec, 13, {"TopicData": [{"TopicId": TOPIC_ID}]})
    kafka_str = base64.urlsafe_b64encode(TOPIC_ID.bytes).decode().rstrip("=")
    for alt in (TOPIC_ID.bytes, str(TOPIC_ID), kafka_str):
        assert encode(spec, 13, {"TopicData": [{"TopicId": alt}]}) == as_uuid


def test_decode_takes_memoryview_and_offset(schemas: Schemas) -> None:
    spec = schemas.request("EndTxn")
    data = encode(spec, 3, {"TransactionalId": "tx", "ProducerId": 9})
    value, end = decode(spec, 3, memoryview(b"xyz" + data), 3)
    assert value["ProducerId"] == 9 and end == 3 + len(data)
