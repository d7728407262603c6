"""Steps of the compiled codec, and the tagged-field section every flexible struct ends with (KIP-482).

A tagged field is written only when it differs from its default; tags this release does not know are kept
as raw bytes under :data:`UNKNOWN_TAGGED_FIELDS`, so a decoded message re-encodes to the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from eoslab.protocol._wire import MISSING, Buffer, Malformed, Reader, Writer, read_uvarint, take, uvarint

UNKNOWN_TAGGED_FIELDS = "_unknown_tagged_fields"

Step = Callable[[Buffer, int, dict[str, Any]], int]  # reads one field (or a run of fixed ones) into the dict
EStep = Callable[[dict[str, Any], list[bytes]], None]  # writes one field (or a run) from the dict
Payload = Callable[[Any], bytes | None]  # a tagged field's bytes, None when it is not written


_F = TypeVar("_F", bound=Callable[..., Any])


def _label(fn: _F, name: str) -> _F:
    cast(Any, fn).field_name = name  # read back when an error needs to name the field
    return fn


def _tagged_payload(write: Writer, default: Any, default_is_null: bool, nullable: bool) -> Payload:
    """The bytes of a tagged field's value, or None when the generator would not write it."""
    default_bytes = None
    if not default_is_null:
        out: list[bytes] = []
        write(default, out)
        default_bytes = b"".join(out)

    def payload(v: Any) -> bytes | None:
        if v is None:
            if default_is_null:
                return None
            if not nullable:
                raise Malformed("None for a non-nullable tagged field")
            return b"\x00"  # compact null / null struct marker
        out: list[bytes] = []
        write(v, out)
        p = b"".join(out)
        return None if p == default_bytes else p

    return payload


# ---------------------------------------------------------------- tagged-field section


def _tag_section(readers: dict[int, tuple[str, Reader]], writers: list[tuple[int, str, Payload]]) -> tuple[Step, EStep]:
    writers = sorted(writers, key=lambda w: w[0])

    def read_tags(buf: Buffer, off: int, d: dict[str, Any]) -> int:
        n, off = read_uvarint(buf, off)
        unknown = None
        for _ in range(n):
            tag, off = read_uvarint(buf, off)
            size, off = read_uvarint(buf, off)
            start, end = take(buf, off, size, f"tagged field {tag}")
            handler = readers.get(tag)
            if handler is None:
                if unknown is None:
                    unknown = {}
                unknown[tag] = bytes(buf[start:end])
            else:
                name, read = handler
                d[name], pos = read(buf, start)
                if pos != end:
                    raise Malformed(f"tagged field {name} declared {size} bytes but used {pos - start}")
            off = end
        if unknown:
            d[UNKNOWN_TAGGED_FIELDS] = unknown
        return off

    def write_tags(v: dict[str, Any], out: list[bytes]) -> None:
        entries = []
        for tag, name, payload in writers:
            value = v.get(name, MISSING)
            if value is not MISSING:
                p = payload(value)
                if p is not None:
                    entries.append((tag, p))
        unknown = v.get(UNKNOWN_TAGGED_FIELDS)
        if unknown:
            if any(t in readers for t in unknown):
                raise Malformed(f"{UNKNOWN_TAGGED_FIELDS} repeats a known tag")
            entries.extend((int(t), bytes(p)) for t, p in unknown.items())
            entries.sort(key=lambda e: e[0])
        out.append(uvarint(len(entries)))
        for tag, p in entries:
            out.append(uvarint(tag))
            out.append(uvarint(len(p)))
            out.append(p)

    return _label(read_tags, "(tagged fields)"), _label(write_tags, "(tagged fields)")
