"""Kafka's record-batch format (v2) assembled by hand, for tests that need real batches and no cluster.

Deliberately independent of :mod:`eoslab.protocol` (which parses these): two implementations agreeing is
the check.
"""

from __future__ import annotations

import struct


def varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)  # zig-zag
    out = bytearray()
    while z >= 0x80:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def record(key: bytes | None, value: bytes | None, offset_delta: int = 0) -> bytes:
    body = b"\x00" + varint(0) + varint(offset_delta)  # attributes, timestampDelta, offsetDelta
    for part in (key, value):
        body += varint(-1) if part is None else varint(len(part)) + part
    body += varint(0)  # no headers
    return varint(len(body)) + body


def batch(
    records: list[bytes],
    *,
    base_offset: int = 0,
    attributes: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    leader_epoch: int = 5,
) -> bytes:
    after_crc = struct.pack(
        ">hiqqqhii",
        attributes,
        len(records) - 1,
        1_700_000_000_000,
        1_700_000_000_123,
        producer_id,
        producer_epoch,
        base_sequence,
        len(records),
    ) + b"".join(records)
    after_length = struct.pack(">ibI", leader_epoch, 2, 0xDEADBEEF) + after_crc
    return struct.pack(">qi", base_offset, len(after_length)) + after_length
