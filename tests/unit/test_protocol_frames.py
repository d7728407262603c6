"""eoslab.protocol: headers and frames against hand-assembled bytes, and malformed input."""

from __future__ import annotations

import random
import struct

import pytest

from eoslab.protocol import (
    ProtocolError,
    Schemas,
    UnsupportedApiError,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    peek_correlation_id,
    peek_request_header,
    request_header_version,
    response_header_version,
)


def _framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _str16(s: str | None) -> bytes:
    return struct.pack(">h", -1) if s is None else struct.pack(">h", len(s.encode())) + s.encode()


def _compact(s: str) -> bytes:
    return bytes([len(s.encode()) + 1]) + s.encode()


# ---------------------------------------------------------------- hand-assembled vectors


def test_api_versions_request_v3_with_client_software(schemas: Schemas) -> None:
    expected = _framed(
        struct.pack(">hhi", 18, 3, 42)
        + _str16("cli")
        + b"\x00"  # header v2: int16 client id + no tags
        + _compact("eoslab")
        + _compact("1.2.3")
        + b"\x00"  # compact strings + no tags
    )
    body = {"ClientSoftwareName": "eoslab", "ClientSoftwareVersion": "1.2.3"}
    assert encode_request("ApiVersions", 3, 42, "cli", body, schemas=schemas) == expected
    request = decode_request(expected[4:], schemas=schemas)
    assert (request.api_key, request.api_name, request.api_version) == (18, "ApiVersions", 3)
    assert (request.correlation_id, request.client_id, request.header_version) == (42, "cli", 2)
    assert request.body == body


def test_init_producer_id_v0_request_and_response(schemas: Schemas) -> None:
    request = _framed(
        struct.pack(">hhi", 22, 0, 7)
        + _str16("producer-1")  # header v1
        + _str16("tx-1")
        + struct.pack(">i", 60000)
    )
    body = {"TransactionalId": "tx-1", "TransactionTimeoutMs": 60000}
    assert encode_request(22, 0, 7, "producer-1", body, schemas=schemas) == request
    assert decode_request(request[4:], schemas=schemas).body == body
    idempotent = _framed(struct.pack(">hhi", 22, 0, 8) + _str16(None) + _str16(None) + struct.pack(">i", 0))
    assert encode_request(22, 0, 8, None, {"TransactionalId": None}, schemas=schemas) == idempotent
    assert decode_request(idempotent[4:], schemas=schemas).client_id is None

    response = _framed(struct.pack(">i", 7) + struct.pack(">ihqh", 0, 0, 4242, 3))  # header v0: no tags
    decoded = decode_response(response[4:], "InitProducerId", 0, schemas=schemas)
    assert decoded.correlation_id == 7 and decoded.header_version == 0
    assert decoded.body == {"ThrottleTimeMs": 0, "ErrorCode": 0, "ProducerId": 4242, "ProducerEpoch": 3}
    assert encode_response("InitProducerId", 0, 7, decoded.body, schemas=schemas) == response


def test_find_coordinator_v4_batched_request(schemas: Schemas) -> None:
    expected = _framed(
        struct.pack(">hhi", 10, 4, 5)
        + _str16("c")
        + b"\x00"
        + struct.pack(">b", 1)  # KeyType = TRANSACTION
        + b"\x03"
        + _compact("tx-1")
        + _compact("tx-2")  # compact array: 2 elements -> 3
        + b"\x00"
    )
    body = {"KeyType": 1, "CoordinatorKeys": ["tx-1", "tx-2"]}
    assert encode_request("FindCoordinator", 4, 5, "c", body, schemas=schemas) == expected
    assert decode_request(expected[4:], schemas=schemas).body == body


def test_response_header_version_choice(schemas: Schemas) -> None:
    assert response_header_version("InitProducerId", 1, schemas=schemas) == 0
    assert response_header_version("InitProducerId", 2, schemas=schemas) == 1  # first flexible
    assert response_header_version("ApiVersions", 2, schemas=schemas) == 0
    assert response_header_version("ApiVersions", 3, schemas=schemas) == 0  # KIP-511: always v0
    assert request_header_version("ApiVersions", 3, schemas=schemas) == 2
    assert request_header_version("Produce", 8, schemas=schemas) == 1
    assert request_header_version("Produce", 9, schemas=schemas) == 2

    body = struct.pack(">ihqh", 0, 0, 1, 0) + b"\x00"  # InitProducerId v2 body (flexible)
    v1 = _framed(struct.pack(">i", 11) + b"\x00" + body)  # header v1 = correlation id + tags
    out = encode_response("InitProducerId", 2, 11, {"ProducerId": 1, "ProducerEpoch": 0}, schemas=schemas)
    assert out == v1
    assert decode_response(v1[4:], 22, 2, schemas=schemas).header_version == 1
    api_versions = encode_response("ApiVersions", 3, 11, {"ErrorCode": 35}, schemas=schemas)
    assert api_versions[4:10] == struct.pack(">ih", 11, 35)  # no tagged-field byte after the correlation id


def test_request_header_v2_keeps_int16_client_id(schemas: Schemas) -> None:
    frame = encode_request("EndTxn", 3, 1, "a-client", {"TransactionalId": "t"}, schemas=schemas)
    assert frame[4:].startswith(struct.pack(">hhi", 26, 3, 1) + _str16("a-client") + b"\x00")
    null_id = encode_request("EndTxn", 3, 1, None, {}, schemas=schemas)
    assert null_id[12:15] == b"\xff\xff\x00"
    request = decode_request(null_id[4:], schemas=schemas)
    assert request.client_id is None and request.header_version == 2


def test_request_roundtrip_with_header_tagged_fields(schemas: Schemas) -> None:
    frame = encode_request("EndTxn", 4, 3, "x", {}, schemas=schemas, header_tagged_fields={5: b"zz"})
    request = decode_request(frame[4:], schemas=schemas)
    assert request.header["_unknown_tagged_fields"] == {5: b"zz"}
    assert request.body["ProducerId"] == 0


def test_a_memoryview_decodes_like_bytes(schemas: Schemas) -> None:
    """The proxy decodes frames in place, from a view of its receive buffer (no copy)."""
    topic_id = "AAECAwQFBgcICQoLDA0ODw"  # base64url of 16 bytes, as Java 4.x clients send it (Produce v13)
    body = {
        "Acks": -1,
        "TimeoutMs": 30000,
        "TopicData": [{"TopicId": topic_id, "PartitionData": [{"Index": 2, "Records": b"\x01" * 70}]}],
    }
    frame = bytearray(encode_request("Produce", 13, 77, "cid", body, schemas=schemas))
    from_view = decode_request(memoryview(frame)[4:], schemas=schemas)
    assert from_view == decode_request(bytes(frame[4:]), schemas=schemas)
    assert from_view.client_id == "cid" and isinstance(from_view.client_id, str)
    records = from_view.body["TopicData"][0]["PartitionData"][0]["Records"]
    assert records == b"\x01" * 70 and isinstance(records, bytes)  # a copy: the buffer is reused afterwards


def test_peeks(schemas: Schemas) -> None:
    frame = encode_request("Produce", 9, 1234, "p", {"Acks": -1}, schemas=schemas)
    assert peek_request_header(frame[4:]) == (0, 9, 1234)
    assert peek_correlation_id(encode_response("Produce", 9, 99, {}, schemas=schemas)[4:]) == 99
    with pytest.raises(ProtocolError):
        peek_request_header(b"\x00\x01")
    with pytest.raises(ProtocolError):
        peek_correlation_id(b"")


# ---------------------------------------------------------------- malformed input


def test_unknown_api_key_and_version(schemas: Schemas) -> None:
    with pytest.raises(UnsupportedApiError, match="api key 999"):
        decode_request(struct.pack(">hhi", 999, 0, 1) + _str16(None), schemas=schemas)
    with pytest.raises(UnsupportedApiError, match="no version 2"):
        decode_request(struct.pack(">hhi", 0, 2, 1) + _str16(None), schemas=schemas)  # Produce v0-2 are gone
    with pytest.raises(UnsupportedApiError):
        encode_request("NoSuchApi", 0, 1, None, {}, schemas=schemas)
    with pytest.raises(UnsupportedApiError):
        decode_response(b"\x00\x00\x00\x01", "Produce", 99, schemas=schemas)
    assert issubclass(UnsupportedApiError, ProtocolError)


def _frames(schemas: Schemas) -> list[bytes]:
    topic = {"Name": "t", "PartitionData": [{"Index": 0, "Records": b"\x01" * 30}]}
    return [
        encode_request(
            "Produce", 9, 1, "c", {"TransactionalId": "tx", "Acks": -1, "TopicData": [topic]}, schemas=schemas
        )[4:],
        encode_request(
            "Produce", 8, 1, "c", {"TransactionalId": "tx", "Acks": -1, "TopicData": [topic]}, schemas=schemas
        )[4:],
        encode_request(
            "AddPartitionsToTxn",
            4,
            2,
            "c",
            {"Transactions": [{"TransactionalId": "tx", "Topics": [{"Name": "t", "Partitions": [0, 1]}]}]},
            schemas=schemas,
        )[4:],
        encode_request("ApiVersions", 3, 3, "c", {"ClientSoftwareName": "x"}, schemas=schemas)[4:],
    ]


def test_every_truncation_raises_protocol_error(schemas: Schemas) -> None:
    for frame in _frames(schemas):
        for cut in range(len(frame)):
            with pytest.raises(ProtocolError):
                decode_request(frame[:cut], schemas=schemas)
    response = encode_response(
        "Produce", 9, 5, {"Responses": [{"Name": "t", "PartitionResponses": [{}]}]}, schemas=schemas
    )[4:]
    for cut in range(len(response)):
        with pytest.raises(ProtocolError):
            decode_response(response[:cut], "Produce", 9, schemas=schemas)


def test_trailing_bytes_raise(schemas: Schemas) -> None:
    frame = _frames(schemas)[0]
    with pytest.raises(ProtocolError, match="trailing|ends at byte"):
        decode_request(frame + b"\x00", schemas=schemas)


def test_garbage_never_leaks_low_level_errors(schemas: Schemas) -> None:
    rng = random.Random(511)
    frames = _frames(schemas)
    for _ in range(3000):
        frame = bytearray(rng.choice(frames))
        for _ in range(rng.randint(1, 4)):  # corrupt a few bytes after the api key/version
            frame[rng.randrange(4, len(frame))] = rng.randrange(256)
        try:
            decode_request(bytes(frame), schemas=schemas)
        except ProtocolError:
            pass
    for _ in range(500):
        try:
            decode_request(rng.randbytes(rng.randint(0, 64)), schemas=schemas)
        except ProtocolError:
            pass


def test_decode_errors_name_the_field(schemas: Schemas) -> None:
    frame = _frames(schemas)[0]
    with pytest.raises(ProtocolError, match=r"ProduceRequest v9.*(TopicData|Records|PartitionData)"):
        decode_request(frame[:-10], schemas=schemas)


@pytest.mark.parametrize(
    ("body", "pattern"),
    [
        ({"Acks": "all"}, "Acks"),
        ({"Acks": 1 << 20}, "Acks"),
        ({"TopicData": [{"Name": None}]}, "Name"),
        ({"TopicData": [{"PartitionData": [{"Records": "not bytes"}]}]}, "Records"),
        ({"TopicData": "oops"}, "TopicData"),
        ({"Akcs": -1}, "unknown field"),
        ({"TopicData": [None]}, "expected a dict"),
    ],
)
def test_encode_errors_are_protocol_errors(schemas: Schemas, body: dict, pattern: str) -> None:
    with pytest.raises(ProtocolError, match=pattern):
        encode_request("Produce", 9, 1, "c", body, schemas=schemas)


def test_a_string_is_not_an_array_of_strings(schemas: Schemas) -> None:
    with pytest.raises(ProtocolError, match="CoordinatorKeys.*expected a list"):
        encode_request("FindCoordinator", 4, 1, "c", {"CoordinatorKeys": "tx-1"}, schemas=schemas)


def test_non_flexible_versions_refuse_tagged_fields(schemas: Schemas) -> None:
    with pytest.raises(ProtocolError, match="does not support them"):
        encode_request("EndTxn", 2, 1, "c", {"_unknown_tagged_fields": {1: b""}}, schemas=schemas)
