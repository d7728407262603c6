"""eoslab.protocol: v2 record batch headers on hand-built batches."""

from __future__ import annotations

import struct

import pytest
from _kafka_bytes import batch as _batch
from _kafka_bytes import record as _record

from eoslab import protocol
from eoslab.protocol import (
    Compression,
    ControlType,
    ProtocolError,
    TimestampType,
    parse_record_batches,
)


def _marker(control_type: int, coordinator_epoch: int) -> bytes:
    return _record(struct.pack(">hh", 0, control_type), struct.pack(">hi", 0, coordinator_epoch))


def test_idempotent_batch() -> None:
    data = _batch(
        [_record(b"k", b"v"), _record(None, b"w", 1)],
        base_offset=100,
        producer_id=4242,
        producer_epoch=0,
        base_sequence=17,
    )
    (batch,) = parse_record_batches(data)
    assert (batch.base_offset, batch.last_offset, batch.record_count) == (100, 101, 2)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (4242, 0, 17)
    assert batch.is_idempotent and not batch.is_transactional and not batch.is_control
    assert batch.magic == 2 and batch.crc == 0xDEADBEEF and batch.partition_leader_epoch == 5
    assert batch.compression is Compression.NONE and batch.timestamp_type is TimestampType.CREATE_TIME
    assert (batch.base_timestamp, batch.max_timestamp) == (1_700_000_000_000, 1_700_000_000_123)
    assert batch.size == len(data) and batch.batch_length == len(data) - 12 and batch.position == 0
    assert batch.control_type is None


def test_plain_batch_is_not_idempotent() -> None:
    (batch,) = parse_record_batches(_batch([_record(b"k", b"v")]))
    assert not batch.is_idempotent and batch.producer_id == -1


def test_transactional_batch_then_commit_and_abort_markers() -> None:
    data_batch = _batch(
        [_record(b"k", b"v")] * 3, base_offset=10, attributes=0x10, producer_id=7, producer_epoch=2, base_sequence=0
    )
    commit = _batch([_marker(1, 9)], base_offset=13, attributes=0x30, producer_id=7, producer_epoch=2)
    abort = _batch([_marker(0, 9)], base_offset=14, attributes=0x30 | 0x08, producer_id=7, producer_epoch=3)
    batches = parse_record_batches(data_batch + commit + abort)
    assert [b.position for b in batches] == [0, len(data_batch), len(data_batch) + len(commit)]
    txn, c, a = batches
    assert txn.is_transactional and not txn.is_control and txn.control_type is None
    assert c.is_transactional and c.is_control and c.control_type is ControlType.COMMIT
    assert c.coordinator_epoch == 9 and c.base_offset == 13
    assert a.control_type is ControlType.ABORT and a.producer_epoch == 3
    assert a.timestamp_type is TimestampType.LOG_APPEND_TIME


def test_compressed_control_batch_has_no_control_type() -> None:
    data = _batch([b"\x99" * 20], attributes=0x30 | 4)  # zstd: the records are not decompressed
    (batch,) = parse_record_batches(data)
    assert batch.compression is Compression.ZSTD and batch.is_control and batch.control_type is None


def test_empty_and_null_records() -> None:
    assert parse_record_batches(None) == [] and parse_record_batches(b"") == []


def test_truncated_batches() -> None:
    data = _batch([_record(b"k", b"v")]) + _batch([_record(b"k", b"v")], base_offset=1)
    for cut in (len(data) - 1, len(data) - 30, len(data) // 2 + 5):
        with pytest.raises(ProtocolError, match="truncated|claims"):
            parse_record_batches(data[:cut])
        assert len(parse_record_batches(data[:cut], allow_partial=True)) == 1  # a fetch may end mid-batch


def test_other_magic_is_refused() -> None:
    data = bytearray(_batch([_record(b"k", b"v")]))
    data[16] = 1
    with pytest.raises(ProtocolError, match="magic 1"):
        parse_record_batches(bytes(data))


def test_batches_inside_a_decoded_produce_request(schemas: protocol.Schemas) -> None:
    records = _batch([_record(b"k", b"v")], attributes=0x10, producer_id=7, producer_epoch=1, base_sequence=0)
    body = {
        "TransactionalId": "tx",
        "Acks": -1,
        "TimeoutMs": 1000,
        "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": records}]}],
    }
    frame = protocol.encode_request("Produce", 11, 1, "c", body, schemas=schemas)
    request = protocol.decode_request(frame[4:], schemas=schemas)
    (batch,) = parse_record_batches(request.body["TopicData"][0]["PartitionData"][0]["Records"])
    assert batch.is_transactional and batch.producer_id == 7
