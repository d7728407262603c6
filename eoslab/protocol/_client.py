"""A small synchronous Kafka client for raw requests: one socket, one request at a time."""

from __future__ import annotations

import itertools
import socket
import struct
from types import TracebackType
from typing import Any

from eoslab.protocol._codec import compile_message
from eoslab.protocol._defaults import default_schemas
from eoslab.protocol._errors import KafkaConnectionError, ProtocolError, UnsupportedApiError
from eoslab.protocol._frames import API_VERSIONS_KEY, Response, decode_response, encode_request
from eoslab.protocol._schema import Schemas

__all__ = ["KafkaConnection"]

_SIZE = struct.Struct(">i")
_PRODUCE_KEY = 0
_UNSUPPORTED_VERSION = 35
DEFAULT_TIMEOUT = 10.0  # a raw request on loopback takes milliseconds; 10 s means the peer is stuck
MAX_FRAME = 100 * 1024 * 1024  # refuse absurd sizes (a non-Kafka port, or a TLS listener)


class KafkaConnection:
    """One TCP connection to a broker (or controller), speaking the pinned Kafka schemas.

    >>> with KafkaConnection("localhost", 9092) as conn:      # doctest: +SKIP
    ...     conn.request("InitProducerId", None, {"TransactionalId": None, "TransactionTimeoutMs": 60000})

    ``version=None`` picks the highest version both this codec and the broker
    support (learned with one ApiVersions exchange, cached per connection).
    Socket failures and timeouts raise :class:`KafkaConnectionError` and close
    the connection (its state is unknown after a partial exchange).
    """

    def __init__(
        self,
        host: str,
        port: int,
        client_id: str | None = "eoslab",
        timeout: float = DEFAULT_TIMEOUT,
        *,
        schemas: Schemas | None = None,
    ) -> None:
        self.host, self.port, self.client_id, self.timeout = host, port, client_id, timeout
        self._schemas = schemas
        self._sock: socket.socket | None = None
        self._correlation = itertools.count(1)
        self._broker_versions: dict[int, tuple[int, int]] | None = None

    @property
    def schemas(self) -> Schemas:
        if self._schemas is None:
            self._schemas = default_schemas()
        return self._schemas

    def __repr__(self) -> str:
        state = "open" if self._sock is not None else "closed"
        return f"KafkaConnection({self.host!r}, {self.port}, client_id={self.client_id!r}, {state})"

    # ------------------------------------------------------------ socket

    def connect(self) -> KafkaConnection:
        if self._sock is None:
            try:
                self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
                self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError as e:
                raise KafkaConnectionError(
                    f"cannot connect to {self.host}:{self.port} ({_reason(e, self.timeout)}): "
                    f"is the broker running and is this its listener port?"
                ) from e
        return self

    def close(self) -> None:
        sock, self._sock = self._sock, None
        self._broker_versions = None
        if sock is not None:
            sock.close()

    def __enter__(self) -> KafkaConnection:
        return self.connect()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _recv_exact(self, sock: socket.socket, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = sock.recv(min(n - got, 1 << 20))
            if not chunk:
                raise ConnectionResetError("the peer closed the connection")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _exchange(self, frame: bytes, expect_response: bool) -> bytes | None:
        sock = self.connect()._sock
        assert sock is not None
        try:
            sock.sendall(frame)
            if not expect_response:
                return None
            size = _SIZE.unpack(self._recv_exact(sock, 4))[0]
            if not 4 <= size <= MAX_FRAME:
                raise ProtocolError(
                    f"{self.host}:{self.port} sent a frame of {size} bytes: not a Kafka PLAINTEXT listener?"
                )
            return self._recv_exact(sock, size)
        except OSError as e:
            self.close()
            raise KafkaConnectionError(
                f"the exchange with {self.host}:{self.port} failed ({_reason(e, self.timeout)})."
            ) from e
        except ProtocolError:
            self.close()
            raise

    # ------------------------------------------------------------ requests

    def request(self, api: int | str, version: int | None = None, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return the decoded response body.

        A Produce with ``Acks=0`` gets no response from the broker: ``{}`` is returned.
        """
        key = self.schemas.api_key(api)
        if version is None:
            version = self.negotiated_version(key)
        body = {} if body is None else body
        correlation_id = next(self._correlation) & 0x7FFFFFFF
        frame = encode_request(key, version, correlation_id, self.client_id, body, schemas=self.schemas)
        expect = not (key == _PRODUCE_KEY and body.get("Acks", 0) == 0)
        data = self._exchange(frame, expect)
        if data is None:
            return {}
        response = self._decode(data, key, version)
        if response.correlation_id != correlation_id:
            self.close()
            raise ProtocolError(
                f"{self.host}:{self.port} answered correlation id {response.correlation_id} "
                f"to request {correlation_id}; connection closed."
            )
        return response.body

    def _decode(self, data: bytes, key: int, version: int) -> Response:
        try:
            return decode_response(data, key, version, schemas=self.schemas)
        except ProtocolError:
            if key != API_VERSIONS_KEY or version == 0:
                raise
            # A broker that does not know this ApiVersions version answers in v0 (KIP-511).
            return decode_response(data, key, 0, schemas=self.schemas)

    def api_versions(self) -> dict[int, tuple[int, int]]:
        """Api key -> (min, max) version the broker supports (asked once per connection)."""
        if self._broker_versions is None:
            spec = self.schemas.request(API_VERSIONS_KEY)
            version = spec.valid_versions.highest
            body = {"ClientSoftwareName": "eoslab", "ClientSoftwareVersion": "0"}
            response = self.request(API_VERSIONS_KEY, version, body)
            if response.get("ErrorCode") == _UNSUPPORTED_VERSION:
                theirs = {k["ApiKey"]: k["MaxVersion"] for k in response.get("ApiKeys", [])}
                version = min(version, theirs.get(API_VERSIONS_KEY, 0))
                response = self.request(API_VERSIONS_KEY, version, body)
            if response.get("ErrorCode"):
                raise ProtocolError(
                    f"{self.host}:{self.port} answered ApiVersions with error code {response['ErrorCode']}."
                )
            self._broker_versions = {
                k["ApiKey"]: (k["MinVersion"], k["MaxVersion"]) for k in response.get("ApiKeys", [])
            }
        return self._broker_versions

    def negotiated_version(self, api: int | str) -> int:
        """The highest version of ``api`` that both the pinned schemas and the broker support."""
        key = self.schemas.api_key(api)
        ours = self.schemas.request(key).valid_versions
        theirs = self.api_versions().get(key)
        if theirs is None:
            name = self.schemas.api_name(key)
            raise UnsupportedApiError(f"{self.host}:{self.port} does not support {name}.")
        lo, hi = max(ours.lowest, theirs[0]), min(ours.highest, theirs[1])
        if lo > hi:
            raise UnsupportedApiError(
                f"{self.schemas.api_name(key)}: the broker supports v{theirs[0]}-{theirs[1]}, "
                f"the pinned schemas v{ours}; no common version."
            )
        compile_message(self.schemas.request(key), hi)  # fail here, not mid-exchange
        return hi


def _reason(e: OSError, timeout: float) -> str:
    if isinstance(e, (TimeoutError, socket.timeout)):
        return f"timed out after {timeout:g}s"
    return str(e) or type(e).__name__
