"""Kafka's own message definitions (``common/message/*.json`` in kafka-clients), parsed.

The semantics follow Kafka's generator (``org.apache.kafka.message``: MessageSpec,
FieldSpec, FieldType, Versions, StructRegistry): version ranges, nullable /
tagged / flexible versions, defaults and ``commonStructs``. Nothing here knows a
message layout by heart; every layout comes from the jar.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from eoslab.protocol._errors import SchemaError, UnsupportedApiError

__all__ = ["FieldSpec", "MessageSpec", "Schemas", "Versions", "load_schemas", "parse_spec"]

_SHORT_MAX = 0x7FFF
PRIMITIVE_TYPES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "string", "bytes", "records", "uuid"}
)
_MESSAGE_DIR = "common/message/"


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive range of versions; ``"none"`` is the empty range (0, -1), ``"3+"`` is (3, 32767)."""

    lowest: int
    highest: int

    @classmethod
    def parse(cls, text: str | None, default: Versions | None = None) -> Versions:
        if text is None:
            if default is None:
                raise SchemaError("a required version range is missing.")
            return default
        t = text.strip()
        try:
            if t == "none":
                return NONE
            if t.endswith("+"):
                return cls(int(t[:-1]), _SHORT_MAX)
            if "-" in t:
                lo, hi = t.split("-", 1)
                return cls(int(lo), int(hi))
            return cls(int(t), int(t))
        except ValueError:
            raise SchemaError(f"invalid version range {text!r}.") from None

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.lowest <= version <= self.highest

    @property
    def empty(self) -> bool:
        return self.lowest > self.highest

    def intersect(self, other: Versions) -> Versions:
        lo, hi = max(self.lowest, other.lowest), min(self.highest, other.highest)
        return Versions(lo, hi) if lo <= hi else NONE

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.highest == _SHORT_MAX:
            return f"{self.lowest}+"
        if self.lowest == self.highest:
            return str(self.lowest)
        return f"{self.lowest}-{self.highest}"


NONE = Versions(0, -1)


@dataclass(frozen=True, eq=False)
class FieldSpec:
    """One field of a message or struct, as Kafka's FieldSpec reads it.

    ``fields`` holds the members of a struct (or struct-array) field, with
    references to ``commonStructs`` already resolved.
    """

    name: str
    type: str
    versions: Versions
    nullable_versions: Versions = NONE
    tagged_versions: Versions = NONE
    tag: int | None = None
    flexible_versions: Versions | None = None  # per-field override (string/bytes only)
    default: str = ""  # the raw "default" string of the spec ("" when absent)
    ignorable: bool = False
    about: str = ""
    entity_type: str | None = None
    map_key: bool = False
    zero_copy: bool = False
    fields: tuple[FieldSpec, ...] = ()

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        """The type without the ``[]`` of an array (the type itself otherwise)."""
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        """True for a struct field or an array of structs."""
        return self.element_type not in PRIMITIVE_TYPES

    def is_tagged(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged_versions and version in self.versions


@dataclass(frozen=True, eq=False)
class MessageSpec:
    """One ``*.json`` definition: a request, a response, a header or a data record.

    Hashing is by identity, so compiled codecs can be cached per (spec, version) cheaply.
    """

    name: str
    type: str  # "request" | "response" | "header" | "data"
    valid_versions: Versions
    flexible_versions: Versions
    fields: tuple[FieldSpec, ...]
    api_key: int | None = None
    listeners: tuple[str, ...] = ()
    latest_version_unstable: bool = False
    common_structs: Mapping[str, tuple[FieldSpec, ...]] = field(default_factory=dict)

    @cached_property
    def api_name(self) -> str:
        """The name without its Request/Response suffix, e.g. ``"InitProducerId"``."""
        for suffix in ("Request", "Response"):
            if self.type == suffix.lower() and self.name.endswith(suffix):
                return self.name[: -len(suffix)]
        return self.name

    @property
    def versions(self) -> range:
        return range(self.valid_versions.lowest, self.valid_versions.highest + 1)

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible_versions

    def __repr__(self) -> str:
        return f"MessageSpec({self.name!r}, api_key={self.api_key}, versions={self.valid_versions})"


def strip_comments(text: str) -> str:
    """Drop ``//`` comments (whole-line or trailing) but never a ``//`` inside a JSON string."""
    out: list[str] = []
    i, n, start = 0, len(text), 0
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "/" and text.startswith("//", i):
            out.append(text[start:i])
            nl = text.find("\n", i)
            i = start = n if nl < 0 else nl
            continue
        i += 1
    out.append(text[start:])
    return "".join(out)


class _StructRegistry:
    """Resolves struct type names: inline definitions and the spec's ``commonStructs``."""

    def __init__(self, spec_name: str, common: list[dict[str, Any]]) -> None:
        self.spec_name = spec_name
        self.raw = {c["name"]: c for c in common}
        self.resolved: dict[str, tuple[FieldSpec, ...]] = {}
        self.resolving: set[str] = set()

    def common(self, name: str) -> tuple[FieldSpec, ...]:
        if name in self.resolved:
            return self.resolved[name]
        if name not in self.raw:
            raise SchemaError(f"{self.spec_name}: struct type {name!r} is neither defined inline nor common.")
        if name in self.resolving:
            raise SchemaError(f"{self.spec_name}: struct type {name!r} contains itself.")
        self.resolving.add(name)
        fields = tuple(self.parse_field(f) for f in self.raw[name].get("fields", []))
        self.resolving.discard(name)
        self.resolved[name] = fields
        return fields

    def _sub_fields(self, raw: dict[str, Any], name: str, type_: str) -> tuple[FieldSpec, ...]:
        """The fields of a struct field (inline, or a common struct's); none for a primitive one."""
        element = type_[2:] if type_.startswith("[]") else type_
        if element.startswith("[]"):
            raise SchemaError(f"{self.spec_name}.{name}: nested arrays are not supported.")
        if element in PRIMITIVE_TYPES:
            if raw.get("fields"):
                raise SchemaError(f"{self.spec_name}.{name}: a {type_} field cannot have fields.")
            return ()
        if "fields" in raw:
            return tuple(self.parse_field(f) for f in raw["fields"])
        return self.common(element)

    def parse_field(self, raw: dict[str, Any]) -> FieldSpec:
        try:
            name, type_ = raw["name"], raw["type"]
        except KeyError as e:
            raise SchemaError(f"{self.spec_name}: a field lacks {e.args[0]!r}.") from None
        tagged = Versions.parse(raw.get("taggedVersions"), NONE)
        versions = Versions.parse(raw.get("versions"), None if tagged.empty else tagged)
        sub = self._sub_fields(raw, name, type_)
        flexible = raw.get("flexibleVersions")
        tag = raw.get("tag")
        if tag is not None and tagged.empty:
            raise SchemaError(f"{self.spec_name}.{name}: tag {tag} without taggedVersions.")
        default = raw.get("default", "")
        return FieldSpec(
            name=name,
            type=type_,
            versions=versions,
            nullable_versions=Versions.parse(raw.get("nullableVersions"), NONE),
            tagged_versions=tagged,
            tag=None if tag is None else int(tag),
            flexible_versions=Versions.parse(flexible) if flexible else None,
            default=default if isinstance(default, str) else json.dumps(default),
            ignorable=bool(raw.get("ignorable", False)),
            about=raw.get("about", ""),
            entity_type=raw.get("entityType"),
            map_key=bool(raw.get("mapKey", False)),
            zero_copy=bool(raw.get("zeroCopy", False)),
            fields=sub,
        )


def parse_spec(text: str) -> MessageSpec:
    """Parse the text of one message definition (comments allowed)."""
    try:
        raw = json.loads(strip_comments(text))
    except json.JSONDecodeError as e:
        raise SchemaError(f"a message definition is not valid JSON after comment stripping: {e}.") from None
    name = raw.get("name", "?")
    registry = _StructRegistry(name, raw.get("commonStructs", []))
    fields = tuple(registry.parse_field(f) for f in raw.get("fields", []))
    for common_name in registry.raw:
        registry.common(common_name)
    api_key = raw.get("apiKey")
    return MessageSpec(
        name=name,
        type=raw.get("type", ""),
        valid_versions=Versions.parse(raw.get("validVersions")),
        flexible_versions=Versions.parse(raw.get("flexibleVersions"), NONE),
        fields=fields,
        api_key=None if api_key is None else int(api_key),
        listeners=tuple(raw.get("listeners", ())),
        latest_version_unstable=bool(raw.get("latestVersionUnstable", False)),
        common_structs=dict(registry.resolved),
    )


@dataclass(frozen=True, eq=False)
class Schemas:
    """Every message definition of one kafka-clients jar, indexed for lookup."""

    source: str
    requests: Mapping[int, MessageSpec]
    responses: Mapping[int, MessageSpec]
    request_header: MessageSpec
    response_header: MessageSpec
    by_name: Mapping[str, MessageSpec]  # every spec by its full name, e.g. "ProduceRequest"

    def __repr__(self) -> str:
        return f"Schemas({self.source!r}, {len(self.requests)} apis)"

    @property
    def api_names(self) -> dict[int, str]:
        """Api key -> api name, e.g. ``{0: "Produce", ...}``, sorted by key."""
        return {k: self.requests[k].api_name for k in sorted(self.requests)}

    def api_key(self, api: int | str) -> int:
        """Accepts a key (``22``), an api name (``"InitProducerId"``) or a spec name."""
        if isinstance(api, int) and not isinstance(api, bool):
            if api in self.requests:
                return api
            raise UnsupportedApiError(f"api key {api} is not in the Kafka schemas of {self.source}.")
        if isinstance(api, str):
            key = self._keys_by_name.get(api.lower())
            if key is not None:
                return key
        raise UnsupportedApiError(f"{api!r} is not an api name in the Kafka schemas of {self.source}.")

    def api_name(self, api: int | str) -> str:
        return self.requests[self.api_key(api)].api_name

    def request(self, api: int | str) -> MessageSpec:
        return self.requests[self.api_key(api)]

    def response(self, api: int | str) -> MessageSpec:
        return self.responses[self.api_key(api)]

    def data(self, name: str) -> MessageSpec:
        """A non-api definition such as ``"EndTxnMarker"`` or ``"LeaderChangeMessage"``."""
        try:
            return self.by_name[name]
        except KeyError:
            raise UnsupportedApiError(f"{name!r} is not a message definition in {self.source}.") from None

    @cached_property
    def _keys_by_name(self) -> dict[str, int]:
        keys: dict[str, int] = {}
        for key, spec in self.requests.items():
            keys[spec.api_name.lower()] = key
            keys[spec.name.lower()] = key
        for key, spec in self.responses.items():
            keys[spec.name.lower()] = key
        return keys


def schemas_from_texts(texts: Mapping[str, str], source: str) -> Schemas:
    """Build :class:`Schemas` from ``{file name: json text}``."""
    requests: dict[int, MessageSpec] = {}
    responses: dict[int, MessageSpec] = {}
    by_name: dict[str, MessageSpec] = {}
    for file_name, text in sorted(texts.items()):
        try:
            spec = parse_spec(text)
        except SchemaError as e:
            raise SchemaError(f"{source}!{file_name}: {e}") from None
        by_name[spec.name] = spec
        if spec.type in ("request", "response"):
            if spec.api_key is None:
                raise SchemaError(f"{source}!{file_name}: a {spec.type} without apiKey.")
            index = requests if spec.type == "request" else responses
            if spec.api_key in index:
                raise SchemaError(f"{source}: api key {spec.api_key} is defined twice ({file_name}).")
            index[spec.api_key] = spec
    for header in ("RequestHeader", "ResponseHeader"):
        if header not in by_name:
            raise SchemaError(f"{source} has no {header}.json under {_MESSAGE_DIR}.")
    if set(requests) != set(responses):
        raise SchemaError(
            f"{source}: api keys without both a request and a response: {sorted(set(requests) ^ set(responses))}."
        )
    return Schemas(source, requests, responses, by_name["RequestHeader"], by_name["ResponseHeader"], by_name)


def load_schemas(jar_path: str | os.PathLike[str]) -> Schemas:
    """Load (once per path) every message definition of a kafka-clients jar."""
    return _load_cached(str(Path(jar_path).expanduser().resolve()))


@lru_cache(maxsize=8)
def _load_cached(jar_path: str) -> Schemas:
    try:
        with zipfile.ZipFile(jar_path) as jar:
            texts = {
                name[len(_MESSAGE_DIR) :]: jar.read(name).decode("utf-8")
                for name in jar.namelist()
                if name.startswith(_MESSAGE_DIR) and name.endswith(".json") and "/" not in name[len(_MESSAGE_DIR) :]
            }
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        raise SchemaError(f"cannot read the message definitions from {jar_path}: {e}.") from None
    if not texts:
        raise SchemaError(f"{jar_path} holds no {_MESSAGE_DIR}*.json: is it a kafka-clients jar?")
    return schemas_from_texts(texts, jar_path)
