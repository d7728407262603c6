"""Whole frames: request/response headers around a body, with the 4-byte size prefix.

Header versions follow Kafka: a request header is v2 when the api version is
flexible, else v1 (``ClientId`` stays an int16-length string even in v2, the
spec says ``"flexibleVersions": "none"``); a response header is v1 when
flexible, else v0, except ApiVersions responses, which always use v0 (KIP-511)
so that a client can read them before it knows what the broker speaks.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, NamedTuple

from eoslab.protocol._codec import UNKNOWN_TAGGED_FIELDS, CompiledStruct, compile_message
from eoslab.protocol._defaults import default_schemas
from eoslab.protocol._errors import ProtocolError, UnsupportedApiError
from eoslab.protocol._schema import MessageSpec, Schemas
from eoslab.protocol._wire import Buffer

__all__ = [
    "Request",
    "RequestHeaderInfo",
    "Response",
    "decode_request",
    "decode_response",
    "encode_request",
    "encode_response",
    "peek_correlation_id",
    "peek_request_header",
    "request_header_version",
    "response_header_version",
]

API_VERSIONS_KEY = 18
_SIZE = struct.Struct(">i")
_PEEK = struct.Struct(">hhi")


def _schemas(schemas: Schemas | None) -> Schemas:
    if schemas is not None:
        return schemas
    return default_schemas()


class _Plan(NamedTuple):
    """Everything needed for one (api, version, direction), looked up once and cached."""

    spec: MessageSpec
    header_version: int
    header: CompiledStruct
    body: CompiledStruct


@cache
def _plan(schemas: Schemas, api_key: int, version: int, request: bool) -> _Plan:
    spec = schemas.requests[api_key] if request else schemas.responses[api_key]
    if version not in spec.valid_versions:
        raise UnsupportedApiError(
            f"{spec.api_name} has no version {version} in the pinned schemas (valid: {spec.valid_versions})."
        )
    if request:
        header_version, header_spec = (2 if spec.is_flexible(version) else 1), schemas.request_header
    else:
        header_version, header_spec = _response_header_version(spec, version), schemas.response_header
    return _Plan(spec, header_version, compile_message(header_spec, header_version), compile_message(spec, version))


def request_header_version(api: int | str, api_version: int, *, schemas: Schemas | None = None) -> int:
    """2 when ``api_version`` of the request is flexible, else 1."""
    return 2 if _schemas(schemas).request(api).is_flexible(api_version) else 1


def response_header_version(api: int | str, api_version: int, *, schemas: Schemas | None = None) -> int:
    """1 when ``api_version`` of the response is flexible, else 0; always 0 for ApiVersions (KIP-511)."""
    return _response_header_version(_schemas(schemas).response(api), api_version)


def _response_header_version(spec: MessageSpec, api_version: int) -> int:
    return 1 if spec.api_key != API_VERSIONS_KEY and spec.is_flexible(api_version) else 0


@dataclass
class Request:
    """A decoded request frame."""

    api_key: int
    api_name: str
    api_version: int
    correlation_id: int
    client_id: str | None
    body: dict[str, Any]
    header_version: int
    header: dict[str, Any] = field(repr=False)  # the header as decoded, with any tagged fields


@dataclass
class Response:
    """A decoded response frame (its api key and version come from the matching request)."""

    api_key: int
    api_name: str
    api_version: int
    correlation_id: int
    body: dict[str, Any]
    header_version: int
    header: dict[str, Any] = field(repr=False)


class RequestHeaderInfo(NamedTuple):
    api_key: int
    api_version: int
    correlation_id: int


def peek_request_header(frame: Buffer) -> RequestHeaderInfo:
    """Api key, api version and correlation id of a request frame, without decoding the rest."""
    try:
        return RequestHeaderInfo(*_PEEK.unpack_from(frame, 0))
    except struct.error:
        raise ProtocolError(f"a request frame of {len(frame)} bytes is too short for a request header.") from None


def peek_correlation_id(frame: Buffer) -> int:
    """The correlation id of a response frame (its first 4 bytes)."""
    try:
        return int(_SIZE.unpack_from(frame, 0)[0])
    except struct.error:
        raise ProtocolError(f"a response frame of {len(frame)} bytes is too short for a correlation id.") from None


def _frame(parts: list[bytes]) -> bytes:
    size = sum(map(len, parts))
    parts.insert(0, _SIZE.pack(size))
    return b"".join(parts)


def _trailing(spec: MessageSpec, version: int, frame: Buffer, off: int) -> None:
    if off != len(frame):
        raise ProtocolError(
            f"{spec.name} v{version} ends at byte {off} but the frame has {len(frame)} bytes "
            f"(wrong api version, or not a Kafka frame?)."
        )


def encode_request(
    api: int | str,
    version: int,
    correlation_id: int,
    client_id: str | None,
    body: Mapping[str, Any],
    *,
    schemas: Schemas | None = None,
    header_tagged_fields: Mapping[int, bytes] | None = None,
) -> bytes:
    """A request frame, size prefix included, ready for ``socket.sendall``."""
    s = _schemas(schemas)
    api_key = s.api_key(api)
    plan = _plan(s, api_key, version, True)
    header: dict[str, Any] = {
        "RequestApiKey": api_key,
        "RequestApiVersion": version,
        "CorrelationId": correlation_id,
        "ClientId": client_id,
    }
    if header_tagged_fields:
        header[UNKNOWN_TAGGED_FIELDS] = header_tagged_fields
    parts: list[bytes] = []
    plan.header.encode(header, parts)
    plan.body.encode(body, parts)
    return _frame(parts)


def decode_request(frame: Buffer, *, schemas: Schemas | None = None) -> Request:
    """Decode a request frame (the bytes after the size prefix); the header says what it is."""
    s = _schemas(schemas)
    api_key, version, _ = peek_request_header(frame)
    if api_key not in s.requests:
        raise UnsupportedApiError(f"api key {api_key} is not in the pinned schemas (not a Kafka request?).")
    plan = _plan(s, api_key, version, True)
    header, off = plan.header.decode(frame, 0)
    body, off = plan.body.decode(frame, off)
    _trailing(plan.spec, version, frame, off)
    return Request(
        api_key,
        plan.spec.api_name,
        version,
        header["CorrelationId"],
        header["ClientId"],
        body,
        plan.header_version,
        header,
    )


def encode_response(
    api: int | str, version: int, correlation_id: int, body: Mapping[str, Any], *, schemas: Schemas | None = None
) -> bytes:
    """A response frame, size prefix included (what a broker, or a fake one, sends)."""
    s = _schemas(schemas)
    plan = _plan(s, s.api_key(api), version, False)
    parts: list[bytes] = []
    plan.header.encode({"CorrelationId": correlation_id}, parts)
    plan.body.encode(body, parts)
    return _frame(parts)


def decode_response(frame: Buffer, api: int | str, version: int, *, schemas: Schemas | None = None) -> Response:
    """Decode a response frame (after the size prefix) to a request of ``api`` at ``version``."""
    s = _schemas(schemas)
    api_key = s.api_key(api)
    plan = _plan(s, api_key, version, False)
    header, off = plan.header.decode(frame, 0)
    body, off = plan.body.decode(frame, off)
    _trailing(plan.spec, version, frame, off)
    return Response(api_key, plan.spec.api_name, version, header["CorrelationId"], body, plan.header_version, header)
