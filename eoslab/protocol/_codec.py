"""Decode and encode message bodies, compiled once per (spec, version) into closures.

Values are plain dicts keyed by Kafka's field names (``"ProducerId"``). Types:
bool, ints and float64 -> ``bool``/``int``/``float``; string -> ``str``; bytes
and records -> ``bytes``; uuid -> :class:`uuid.UUID`; arrays -> ``list``;
structs -> ``dict``; null -> ``None``. Tagged fields this release does not know
are kept as ``{tag: raw bytes}`` under :data:`UNKNOWN_TAGGED_FIELDS`, so a
decoded message re-encodes to the same bytes.

Semantics follow Kafka's MessageDataGenerator: fields outside their versions are
skipped (omitted on decode, ignored on encode); a missing field encodes as its
default; a tagged field is written only when it differs from its default (a
null tagged field with a non-null default is written as an explicit null);
every struct of a flexible version ends with its own tagged-field section.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from eoslab.protocol._errors import ProtocolError, UnsupportedApiError
from eoslab.protocol._schema import FieldSpec, MessageSpec
from eoslab.protocol._tagged import UNKNOWN_TAGGED_FIELDS, EStep, Payload, Step, _label, _tag_section, _tagged_payload
from eoslab.protocol._wire import (
    FIXED,
    LOW_LEVEL_ERRORS,
    ZERO_UUID,
    Buffer,
    Malformed,
    Reader,
    Writer,
    array,
    bytes_,
    fixed,
    nullable_struct,
    read_uuid,
    string,
    uuid_bytes,
    write_uuid,
)

__all__ = ["UNKNOWN_TAGGED_FIELDS", "compile_message", "decode", "default_message", "encode"]


@dataclass(frozen=True)
class CompiledStruct:
    """The closures of one struct (or message) at one version."""

    decode: Reader
    encode: Writer
    default: Callable[[], dict[str, Any]]


# ---------------------------------------------------------------- one field


def _bytes_default(d: str) -> bytes:
    return b""


def _int_default(d: str) -> int:
    return (int(d[2:], 16) if d.startswith("0x") else int(d)) if d else 0


_SCALAR_DEFAULTS: dict[str, Callable[[str], Any]] = {
    **{t: _int_default for t in FIXED},
    "bool": lambda d: d.lower() == "true",
    "float64": lambda d: float(d) if d else 0.0,
    "string": lambda d: d,
    "uuid": lambda d: uuid.UUID(bytes=uuid_bytes(d)) if d else ZERO_UUID,
    "records": lambda d: None,
}
"""A scalar field's default read from its ``default`` text, by type (bytes: :func:`_bytes_default`)."""


def _default(f: FieldSpec, nested: CompiledStruct | None) -> Callable[[], Any]:
    """The generator's default for a field, as a factory (fresh lists/dicts each call)."""
    if f.default == "null":
        return lambda: None
    if f.is_array:
        return list
    if nested is not None:
        return nested.default
    value = _SCALAR_DEFAULTS.get(f.element_type, _bytes_default)(f.default)
    return lambda: value


def _element_codec(t: str, nested: CompiledStruct | None, compact: bool, nullable: bool) -> tuple[Reader, Writer]:
    """Reader and writer of one value of a field's element type."""
    if nested is not None:
        return nested.decode, nested.encode
    if t in FIXED:
        return fixed(FIXED[t])
    if t == "uuid":
        return read_uuid, write_uuid
    if t == "string":
        return string(compact, nullable)
    return bytes_(compact, nullable)  # bytes, records


def _value_codec(
    f: FieldSpec, version: int, flexible: bool, tagged: bool, path: str
) -> tuple[Reader, Writer, CompiledStruct | None]:
    """Reader and writer of one field's value (tagged fields always use the compact forms)."""
    nullable = version in f.nullable_versions
    compact = tagged or (version in f.flexible_versions if f.flexible_versions is not None else flexible)
    nested = _compile_struct(f.fields, version, flexible, f"{path}.{f.name}") if f.is_struct else None
    elem = _element_codec(f.element_type, nested, compact, nullable and not f.is_array)  # array elements are never null
    if f.is_array:
        return (*array(compact, nullable, f.element_type, elem), nested)
    if nested is not None and nullable:  # int8 marker -1/1, or uvarint 0/1 when tagged
        return (*nullable_struct(nested.decode, nested.encode, marker_varint=tagged), nested)
    return elem[0], elem[1], nested


def _read_step(name: str, read: Reader) -> Step:
    def step(buf: Buffer, off: int, d: dict[str, Any]) -> int:
        d[name], off = read(buf, off)
        return off

    return _label(step, name)


def _write_step(name: str, write: Writer, dflt: Any) -> EStep:
    def step(v: dict[str, Any], out: list[bytes]) -> None:
        write(v.get(name, dflt), out)

    return _label(step, name)


def _default_step(name: str, factory: Callable[[], Any]) -> Step:
    """A tagged field: its default, overwritten if the tagged-field section carries it."""

    def step(buf: Buffer, off: int, d: dict[str, Any]) -> int:
        d[name] = factory()
        return off

    return _label(step, name)


def _fixed_run(run: list[tuple[str, str, Any]]) -> tuple[Step, EStep]:
    """Consecutive fixed-width fields, read and written with one struct call."""
    s = struct.Struct(">" + "".join(code for _, code, _ in run))
    unpack, pack, size = s.unpack_from, s.pack, s.size
    names = tuple(n for n, _, _ in run)
    pairs = tuple((n, dflt) for n, _, dflt in run)
    label = ", ".join(names)

    def step(buf: Buffer, off: int, d: dict[str, Any]) -> int:
        d.update(zip(names, unpack(buf, off), strict=True))
        return off + size

    def estep(v: dict[str, Any], out: list[bytes]) -> None:
        out.append(pack(*[v.get(n, dflt) for n, dflt in pairs]))

    return _label(step, label), _label(estep, label)


# ---------------------------------------------------------------- structs


class _StructSteps:
    """The steps of one struct at one version, built field by field: consecutive fixed-width fields
    become one run (one struct call), tagged fields go to the tagged-field section."""

    def __init__(self, version: int, flexible: bool, path: str) -> None:
        self.version, self.flexible, self.path = version, flexible, path
        self.steps: list[Step] = []
        self.esteps: list[EStep] = []
        self.defaults: list[tuple[str, Callable[[], Any]]] = []
        self.tag_readers: dict[int, tuple[str, Reader]] = {}
        self.tag_writers: list[tuple[int, str, Payload]] = []
        self.run: list[tuple[str, str, Any]] = []

    def flush(self) -> None:
        if self.run:
            step, estep = _fixed_run(self.run)
            self.steps.append(step)
            self.esteps.append(estep)
            self.run.clear()

    def add(self, f: FieldSpec) -> None:
        tagged = f.is_tagged(self.version)
        if tagged and not self.flexible:
            raise ProtocolError(f"{self.path}.{f.name} is tagged in non-flexible version {self.version}.")
        read, write, nested = _value_codec(f, self.version, self.flexible, tagged, self.path)
        factory = _default(f, nested)
        self.defaults.append((f.name, factory))
        if tagged:
            self._add_tagged(f, read, write, factory)
        elif f.type in FIXED:
            self.run.append((f.name, FIXED[f.type], factory()))
        else:
            self.flush()
            self.steps.append(_read_step(f.name, read))
            # Missing values encode as the default; () and {} stand for [] and a default struct.
            has_value = f.default != "null"
            dflt = () if f.is_array and has_value else {} if nested and has_value else factory()
            self.esteps.append(_write_step(f.name, write, dflt))

    def _add_tagged(self, f: FieldSpec, read: Reader, write: Writer, factory: Callable[[], Any]) -> None:
        assert f.tag is not None
        self.flush()
        self.tag_readers[f.tag] = (f.name, read)
        payload = _tagged_payload(write, factory(), f.default == "null", self.version in f.nullable_versions)
        self.tag_writers.append((f.tag, f.name, payload))
        self.steps.append(_default_step(f.name, factory))

    def decoder(self, read_tags: Step) -> Reader:
        """The struct's reader: its steps, then (in a flexible version) its tagged-field section."""
        steps, flexible, path = self.steps, self.flexible, self.path

        def decode_struct(buf: Buffer, off: int) -> tuple[dict[str, Any], int]:
            d: dict[str, Any] = {}
            step: Any = None
            try:
                for step in steps:
                    off = step(buf, off, d)
                if flexible:
                    step = read_tags
                    if buf[off] == 0:  # no tagged fields: the common case, without a call
                        off += 1
                    else:
                        off = read_tags(buf, off, d)
            except LOW_LEVEL_ERRORS as e:
                raise ProtocolError(_message("decode", path, step, e, off)) from e
            return d, off

        return decode_struct

    def encoder(self, write_tags: EStep, known: frozenset[str]) -> Writer:
        """The struct's writer: a dict of ``known`` fields only, its steps, then its tagged-field section."""
        esteps, flexible, version, path = self.esteps, self.flexible, self.version, self.path
        has_tags = bool(self.tag_writers)

        def encode_struct(v: dict[str, Any], out: list[bytes]) -> None:
            step: Any = None
            try:
                if type(v) is not dict and not isinstance(v, Mapping):
                    raise Malformed(f"expected a dict, got {type(v).__name__}")
                if not known.issuperset(v):
                    raise Malformed(f"unknown field(s) {sorted(map(str, set(v) - known))}")
                for step in esteps:
                    step(v, out)
                if flexible:
                    step = write_tags
                    if has_tags or UNKNOWN_TAGGED_FIELDS in v:
                        write_tags(v, out)
                    else:
                        out.append(b"\x00")  # no tagged fields
                elif v.get(UNKNOWN_TAGGED_FIELDS):
                    raise Malformed(f"tagged fields set, but version {version} does not support them")
            except LOW_LEVEL_ERRORS as e:
                raise ProtocolError(_message("encode", path, step, e, None)) from e

        return encode_struct


def _compile_struct(fields: tuple[FieldSpec, ...], version: int, flexible: bool, path: str) -> CompiledStruct:
    built = _StructSteps(version, flexible, path)
    for f in fields:
        if version in f.versions:
            built.add(f)
    built.flush()
    read_tags, write_tags = _tag_section(built.tag_readers, built.tag_writers)
    known = frozenset(f.name for f in fields) | {UNKNOWN_TAGGED_FIELDS}
    defaults = built.defaults

    def default() -> dict[str, Any]:
        return {name: factory() for name, factory in defaults}

    return CompiledStruct(built.decoder(read_tags), built.encoder(write_tags, known), default)


def _message(verb: str, path: str, step: Any, e: BaseException, off: int | None) -> str:
    field = f" field {step.field_name}" if step is not None else ""
    if isinstance(e, (struct.error, IndexError)) and verb == "decode":
        reason = "the bytes end too early (truncated or garbage frame?)"
    else:
        reason = str(e) or type(e).__name__
    where = f" at byte {off}" if off is not None else ""
    return f"cannot {verb} {path}{field}{where}: {reason}."


# ---------------------------------------------------------------- public


@cache
def compile_message(spec: MessageSpec, version: int) -> CompiledStruct:
    """The compiled decoder/encoder of one spec at one version (cached)."""
    if version not in spec.valid_versions:
        raise UnsupportedApiError(
            f"{spec.name} has no version {version} in the pinned schemas (valid: {spec.valid_versions})."
        )
    return _compile_struct(spec.fields, version, spec.is_flexible(version), f"{spec.name} v{version}")


def decode(spec: MessageSpec, version: int, buf: Buffer, offset: int = 0) -> tuple[dict[str, Any], int]:
    """Decode one message body starting at ``offset``; returns (value, offset after it)."""
    return compile_message(spec, version).decode(buf, offset)


def encode(spec: MessageSpec, version: int, value: Mapping[str, Any]) -> bytes:
    """Encode one message body; missing fields take their defaults, fields of other versions are ignored."""
    out: list[bytes] = []
    compile_message(spec, version).encode(value, out)
    return b"".join(out)


def default_message(spec: MessageSpec, version: int) -> dict[str, Any]:
    """Every field of ``spec`` at ``version`` set to the generator's default."""
    return compile_message(spec, version).default()
