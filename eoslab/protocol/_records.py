"""The headers of v2 record batches inside a ``records`` field (Produce, Fetch, ...).

Only headers are parsed (records are not decompressed). Layout (big-endian)::

    baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 (=2)
    crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64
    maxTimestamp int64 | producerId int64 | producerEpoch int16 | baseSequence int32
    recordCount int32 | records...

Attributes: bits 0-2 compression, bit 3 timestamp type, bit 4 transactional,
bit 5 control, bit 6 delete horizon. ``batchLength`` counts the bytes after
itself, so a batch takes ``12 + batchLength`` bytes. The one record of a control
batch has key ``(version int16, type int16)``, type 0 = ABORT and 1 = COMMIT;
for those two, the value is an EndTxnMarker ``(version int16, coordinatorEpoch int32)``.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from eoslab.protocol._errors import ProtocolError

__all__ = [
    "Compression",
    "ControlType",
    "RecordBatchHeader",
    "TimestampType",
    "iter_record_batches",
    "parse_record_batches",
]

_HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = _HEADER.size  # 61
_LOG_OVERHEAD = 12  # baseOffset + batchLength


class Compression(enum.IntEnum):
    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class TimestampType(enum.IntEnum):
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class ControlType(enum.IntEnum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


@dataclass(frozen=True)
class RecordBatchHeader:
    """One v2 record batch header; ``position`` is its byte offset within the records blob."""

    position: int
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    control_type: ControlType | int | None = None  # only for uncompressed control batches
    coordinator_epoch: int | None = None  # from the EndTxnMarker of an ABORT/COMMIT marker

    @property
    def compression(self) -> Compression | int:
        code = self.attributes & 0x07
        return Compression(code) if code in Compression._value2member_map_ else code

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType((self.attributes >> 3) & 1)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & 0x10)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & 0x40)

    @property
    def is_idempotent(self) -> bool:
        """Written by an idempotent (or transactional) producer: it carries a producer id."""
        return self.producer_id >= 0

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def size(self) -> int:
        """Bytes the batch takes in the blob."""
        return _LOG_OVERHEAD + self.batch_length


def _varint(buf: bytes, off: int) -> tuple[int, int]:
    """A zig-zag varint (records use signed varints)."""
    result, shift = 0, 0
    while True:
        b = buf[off]
        off += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), off
        shift += 7
        if shift > 63:
            raise ProtocolError("a varint in a control record is longer than 10 bytes.")


def _control(buf: bytes, off: int, end: int) -> tuple[ControlType | int | None, int | None]:
    """Key type (and EndTxnMarker epoch) of the first record of an uncompressed control batch."""
    try:
        _, off = _varint(buf, off)  # record length
        off += 1  # record attributes
        _, off = _varint(buf, off)  # timestampDelta
        _, off = _varint(buf, off)  # offsetDelta
        key_len, off = _varint(buf, off)
        if key_len < 4 or off + key_len > end:
            return None, None
        _, type_ = struct.unpack_from(">hh", buf, off)
        off += key_len
        control: ControlType | int = ControlType(type_) if type_ in ControlType._value2member_map_ else type_
        epoch = None
        value_len, off = _varint(buf, off)
        if control in (ControlType.ABORT, ControlType.COMMIT) and value_len >= 6 and off + value_len <= end:
            epoch = struct.unpack_from(">hi", buf, off)[1]
        return control, epoch
    except (IndexError, struct.error):
        return None, None


def iter_record_batches(
    records: bytes | bytearray | memoryview | None, *, allow_partial: bool = False
) -> Iterator[RecordBatchHeader]:
    """Yield the header of each batch. A truncated last batch raises, unless ``allow_partial``
    (fetch responses may end with a partial batch), which stops there instead."""
    if not records:
        return
    buf = bytes(records)
    off, n = 0, len(buf)
    while off < n:
        header = _batch_at(buf, off, allow_partial)
        if header is None:  # a truncated last batch, allowed
            return
        yield header
        off += header.size


def _batch_at(buf: bytes, off: int, allow_partial: bool) -> RecordBatchHeader | None:
    """The header of the batch at ``off``; ``None`` when it is truncated and ``allow_partial``."""
    n = len(buf)
    if n - off < HEADER_SIZE:
        if allow_partial:
            return None
        raise ProtocolError(f"a record batch at byte {off} is truncated ({n - off} of {HEADER_SIZE} header bytes).")
    (
        base_offset,
        batch_length,
        leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        record_count,
    ) = _HEADER.unpack_from(buf, off)
    if magic != 2:
        raise ProtocolError(f"the record batch at byte {off} has magic {magic}; only v2 batches are parsed.")
    end = off + _LOG_OVERHEAD + batch_length
    if batch_length < HEADER_SIZE - _LOG_OVERHEAD or end > n:
        if allow_partial and batch_length >= HEADER_SIZE - _LOG_OVERHEAD:
            return None
        raise ProtocolError(
            f"the record batch at byte {off} claims {batch_length} bytes after its "
            f"length, but {n - off - _LOG_OVERHEAD} remain."
        )
    control: ControlType | int | None = None
    epoch = None
    if attributes & 0x20 and attributes & 0x07 == 0 and record_count > 0:
        control, epoch = _control(buf, off + HEADER_SIZE, end)
    return RecordBatchHeader(
        off,
        base_offset,
        batch_length,
        leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        base_timestamp,
        max_timestamp,
        producer_id,
        producer_epoch,
        base_sequence,
        record_count,
        control,
        epoch,
    )


def parse_record_batches(
    records: bytes | bytearray | memoryview | None, *, allow_partial: bool = False
) -> list[RecordBatchHeader]:
    """The headers of every v2 batch in a ``records`` value (``None``/empty gives ``[]``)."""
    return list(iter_record_batches(records, allow_partial=allow_partial))
