"""Wire primitives: varints, length prefixes, and value handlers (reader, writer) per type.

A reader is ``(buf, offset) -> (value, new offset)``; a writer is
``(value, out: list of bytes) -> None``. Handlers raise :class:`Malformed` (or a
struct/index error) on bad input; the enclosing struct turns that into a
:class:`ProtocolError` that names the field.
"""

from __future__ import annotations

import base64
import struct
import uuid
from collections.abc import Callable
from typing import Any

Buffer = bytes | bytearray | memoryview
Reader = Callable[[Buffer, int], tuple[Any, int]]
Writer = Callable[[Any, list[bytes]], None]

FIXED = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
}
_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")
MISSING: Any = object()
ZERO_UUID = uuid.UUID(int=0)


class Malformed(ValueError):
    """Raised inside a handler; the enclosing struct turns it into a ProtocolError with the field path."""


# Errors a handler may hit on bad input; structs wrap them (never let them leak out).
LOW_LEVEL_ERRORS: tuple[type[BaseException], ...] = (
    struct.error,
    IndexError,
    ValueError,
    TypeError,
    OverflowError,
    AttributeError,
    KeyError,
)


def read_uvarint(buf: Buffer, off: int) -> tuple[int, int]:
    b = buf[off]
    if b < 0x80:
        return b, off + 1
    result, shift = b & 0x7F, 7
    while True:
        off += 1
        b = buf[off]
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, off + 1
        shift += 7
        if shift > 28:
            raise Malformed("unsigned varint longer than 5 bytes")


_SMALL_UVARINTS = [bytes([i]) for i in range(128)]


def uvarint(n: int) -> bytes:
    if 0 <= n < 128:
        return _SMALL_UVARINTS[n]
    if n < 0 or n > 0xFFFFFFFF:
        raise Malformed(f"{n} does not fit an unsigned varint")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def take(buf: Buffer, off: int, n: int, what: str) -> tuple[int, int]:
    end = off + n
    if end > len(buf):
        raise Malformed(f"{what} of {n} bytes runs past the end ({len(buf) - off} left)")
    return off, end


def uuid_bytes(v: Any) -> bytes:
    if isinstance(v, uuid.UUID):
        return v.bytes
    if isinstance(v, (bytes, bytearray, memoryview)) and len(v) == 16:
        return bytes(v)
    if isinstance(v, str):
        if len(v) == 22:  # Kafka's own base64url form, e.g. a topic id printed by kafka-topics
            return base64.urlsafe_b64decode(v + "==")
        return uuid.UUID(v).bytes
    raise TypeError(f"expected a uuid.UUID, got {type(v).__name__}")


# ---------------------------------------------------------------- value handlers


def fixed(code: str) -> tuple[Reader, Writer]:
    s = struct.Struct(">" + code)
    unpack, pack, size = s.unpack_from, s.pack, s.size

    def read(buf: Buffer, off: int) -> tuple[Any, int]:
        return unpack(buf, off)[0], off + size

    def write(v: Any, out: list[bytes]) -> None:
        out.append(pack(v))

    return read, write


def read_uuid(buf: Buffer, off: int) -> tuple[Any, int]:
    start, end = take(buf, off, 16, "uuid")
    return uuid.UUID(bytes=bytes(buf[start:end])), end


def write_uuid(v: Any, out: list[bytes]) -> None:
    out.append(uuid_bytes(v))


# Lengths are read inline (not through a helper call): they sit on the produce path.
# Strings use an int16 length, bytes/records/arrays an int32, compact forms a uvarint of length+1;
# a negative (or compact 0) length is null.


def _null(n: int, nullable: bool, what: str) -> Any:
    """None for a null length, or an error when null is not allowed (or the length is bogus)."""
    if n != -1:
        raise Malformed(f"{what} has negative length {n}")
    if not nullable:
        raise Malformed(f"non-nullable {what} was serialized as null")
    return None


def _null_bytes(compact: bool, wide: bool, nullable: bool, what: str) -> bytes:
    if not nullable:
        raise Malformed(f"None for non-nullable {what}")
    return b"\x00" if compact else (b"\xff\xff\xff\xff" if wide else b"\xff\xff")


def _length_prefix(compact: bool, wide: bool) -> Callable[[int], bytes]:
    if compact:
        small = _SMALL_UVARINTS
        return lambda n: small[n + 1] if n < 127 else uvarint(n + 1)
    return (_I32 if wide else _I16).pack


def string(compact: bool, nullable: bool) -> tuple[Reader, Writer]:
    unpack_len = _I16.unpack_from
    prefix = _length_prefix(compact, False)

    def read(buf: Buffer, off: int) -> tuple[Any, int]:
        if compact:
            n = buf[off]
            if n < 0x80:
                off += 1
            else:
                n, off = read_uvarint(buf, off)
            n -= 1
        else:
            n = unpack_len(buf, off)[0]
            off += 2
        if n < 0:
            return _null(n, nullable, "string"), off
        if n > 0x7FFF:
            raise Malformed(f"string length {n} is above 32767")
        end = off + n
        if end > len(buf):
            raise Malformed(f"string of {n} bytes runs past the end ({len(buf) - off} left)")
        return str(buf[off:end], "utf-8"), end

    def write(v: Any, out: list[bytes]) -> None:
        if v is None:
            out.append(_null_bytes(compact, False, nullable, "string"))
            return
        b = v.encode("utf-8")
        if len(b) > 0x7FFF:
            raise Malformed(f"string of {len(b)} bytes is too long to be serialized")
        out.append(prefix(len(b)))
        out.append(b)

    return read, write


def bytes_(compact: bool, nullable: bool) -> tuple[Reader, Writer]:
    """bytes and records (records stay raw bytes)."""
    unpack_len = _I32.unpack_from
    prefix = _length_prefix(compact, True)

    def read(buf: Buffer, off: int) -> tuple[Any, int]:
        if compact:
            n, off = read_uvarint(buf, off)
            n -= 1
        else:
            n = unpack_len(buf, off)[0]
            off += 4
        if n < 0:
            return _null(n, nullable, "bytes"), off
        end = off + n
        if end > len(buf):
            raise Malformed(f"bytes of {n} bytes run past the end ({len(buf) - off} left)")
        return bytes(buf[off:end]), end

    def write(v: Any, out: list[bytes]) -> None:
        if v is None:
            out.append(_null_bytes(compact, True, nullable, "bytes"))
            return
        if not isinstance(v, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected bytes, got {type(v).__name__}")
        out.append(prefix(len(v)))
        out.append(bytes(v))  # the same object when v is bytes (no copy)

    return read, write


def array(compact: bool, nullable: bool, elem_type: str, elem_codec: tuple[Reader, Writer]) -> tuple[Reader, Writer]:
    unpack_len = _I32.unpack_from
    prefix = _length_prefix(compact, True)
    read_elem, write_elem = elem_codec
    code = FIXED.get(elem_type)  # fixed-width elements: one struct call for the whole array
    size = struct.calcsize(">" + code) if code else 0

    def read(buf: Buffer, off: int) -> tuple[Any, int]:
        if compact:
            n = buf[off]
            if n < 0x80:
                off += 1
            else:
                n, off = read_uvarint(buf, off)
            n -= 1
        else:
            n = unpack_len(buf, off)[0]
            off += 4
        if n < 0:
            return _null(n, nullable, "array"), off
        if n > len(buf) - off:
            raise Malformed(f"array of {n} elements but only {len(buf) - off} bytes remain")
        if code:
            return list(struct.unpack_from(f">{n}{code}", buf, off)), off + n * size
        items = []
        for _ in range(n):
            item, off = read_elem(buf, off)
            items.append(item)
        return items, off

    def write(v: Any, out: list[bytes]) -> None:
        if v is None:
            out.append(_null_bytes(compact, True, nullable, "array"))
            return
        if isinstance(v, (str, bytes, bytearray, dict)):  # iterable, but surely not what was meant
            raise TypeError(f"expected a list, got {type(v).__name__}")
        out.append(prefix(len(v)))
        if code:
            out.append(struct.pack(f">{len(v)}{code}", *v))
        else:
            for item in v:
                write_elem(item, out)

    return read, write


def nullable_struct(read_struct: Reader, write_struct: Writer, marker_varint: bool) -> tuple[Reader, Writer]:
    """A nullable (non-array) struct: int8 -1/1 marker, or uvarint 0/1 when tagged."""
    present = b"\x01"
    null = b"\x00" if marker_varint else b"\xff"

    def read(buf: Buffer, off: int) -> tuple[Any, int]:
        if marker_varint:
            m, off = read_uvarint(buf, off)
            if m <= 0:
                return None, off
        else:
            if buf[off] >= 0x80:  # int8 < 0
                return None, off + 1
            off += 1
        return read_struct(buf, off)

    def write(v: Any, out: list[bytes]) -> None:
        if v is None:
            out.append(null)
        else:
            out.append(present)
            write_struct(v, out)

    return read, write
