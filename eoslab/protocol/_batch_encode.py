"""Encode a v2 record batch (KIP-98): what a raw Produce carries.

Why by hand: a lesson must send a Produce no client would send now — a late write of a
transaction that already ended, with the producer's id, epoch and next sequence — to
see what the leader answers. The layout is the one :mod:`eoslab.protocol._records`
parses: a 61-byte header, then records with zig-zag varints; the CRC is CRC-32C
(Castagnoli) of everything after the crc field.
"""

from __future__ import annotations

import struct
import time
from functools import cache

_CASTAGNOLI = 0x82F63B78
_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. record count
TRANSACTIONAL = 0x10


@cache
def _table() -> tuple[int, ...]:
    out = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _CASTAGNOLI if c & 1 else c >> 1
        out.append(c)
    return tuple(out)


def crc32c(data: bytes) -> int:
    """CRC-32C of ``data`` (the record batch checksum)."""
    t, c = _table(), 0xFFFFFFFF
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)  # zig-zag
    out = bytearray()
    while True:
        byte = z & 0x7F
        z >>= 7
        if z:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _record(offset_delta: int, key: bytes | None, value: bytes | None) -> bytes:
    body = bytes([0]) + _varint(0) + _varint(offset_delta)  # attributes, timestamp delta, offset delta
    body += _varint(-1) if key is None else _varint(len(key)) + key
    body += _varint(-1) if value is None else _varint(len(value)) + value
    body += _varint(0)  # no headers
    return _varint(len(body)) + body


def encode_record_batch(
    values: list[bytes | None],
    *,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    timestamp_ms: int | None = None,
    keys: list[bytes | None] | None = None,
) -> bytes:
    """One uncompressed v2 batch of ``values`` (base offset 0: the leader assigns offsets)."""
    ts = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    keys = keys or [None] * len(values)
    records = b"".join(_record(i, k, v) for i, (k, v) in enumerate(zip(keys, values, strict=True)))
    after_crc = (
        _AFTER_CRC.pack(
            TRANSACTIONAL if transactional else 0,
            len(values) - 1,
            ts,
            ts,
            producer_id,
            producer_epoch,
            base_sequence,
            len(values),
        )
        + records
    )
    length = 4 + 1 + 4 + len(after_crc)  # partition leader epoch, magic, crc, the rest
    return struct.pack(">qiibI", 0, length, -1, 2, crc32c(after_crc)) + after_crc
