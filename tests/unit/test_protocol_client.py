"""eoslab.protocol.KafkaConnection against a fake broker on a loopback socket (no Kafka, no JVM)."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from eoslab import protocol
from eoslab.protocol import (
    KafkaConnection,
    KafkaConnectionError,
    ProtocolError,
    Request,
    Schemas,
    UnsupportedApiError,
)

Handler = Callable[[Request], "bytes | None"]


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError
        data += chunk
    return data


@pytest.fixture
def broker(schemas: Schemas) -> Iterator[Callable[[Handler], int]]:
    """Start a one-connection fake broker with a handler; yields a function returning its port."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    seen: list[Request] = []
    threads: list[threading.Thread] = []

    def serve(handler: Handler, close_after_reply: bool) -> None:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            try:
                while True:
                    size = struct.unpack(">i", _recv_exact(conn, 4))[0]
                    request = protocol.decode_request(_recv_exact(conn, size), schemas=schemas)
                    seen.append(request)
                    reply = handler(request)
                    if reply is not None:
                        conn.sendall(reply)
                    if close_after_reply:
                        return
            except (ConnectionError, OSError):
                return

    def start(handler: Handler, close_after_reply: bool = False) -> int:
        t = threading.Thread(target=serve, args=(handler, close_after_reply), daemon=True)
        t.start()
        threads.append(t)
        return int(server.getsockname()[1])

    start.seen = seen  # type: ignore[attr-defined]
    yield start
    server.close()
    for t in threads:
        t.join(timeout=2)


def _kafka_like(schemas: Schemas, versions: dict[int, tuple[int, int]]) -> Handler:
    def handle(request: Request) -> bytes | None:
        r = request
        if r.api_key == 18:
            if r.api_version > versions[18][1]:  # what a real broker does: a v0 body with UNSUPPORTED_VERSION
                body: dict[str, Any] = {
                    "ErrorCode": 35,
                    "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": versions[18][1]}],
                }
                return protocol.encode_response(18, 0, r.correlation_id, body, schemas=schemas)
            body = {"ApiKeys": [{"ApiKey": k, "MinVersion": lo, "MaxVersion": hi} for k, (lo, hi) in versions.items()]}
        elif r.api_key == 22:
            body = {"ProducerId": 4242, "ProducerEpoch": r.api_version}
        elif r.api_key == 0:
            if r.body["Acks"] == 0:
                return None
            body = {}
        else:
            raise AssertionError(r)
        return protocol.encode_response(r.api_key, r.api_version, r.correlation_id, body, schemas=schemas)

    return handle


VERSIONS = {18: (0, 4), 22: (0, 5), 0: (3, 11)}


def test_request_with_negotiated_and_explicit_versions(schemas: Schemas, broker: Any) -> None:
    port = broker(_kafka_like(schemas, VERSIONS))
    with KafkaConnection("127.0.0.1", port, client_id="t", schemas=schemas) as conn:
        assert conn.api_versions() == VERSIONS
        body = conn.request("InitProducerId", None, {"TransactionalId": "tx", "TransactionTimeoutMs": 1000})
        assert body["ProducerId"] == 4242 and body["ProducerEpoch"] == 5  # min(ours 6, broker 5)
        assert conn.request(22, 2, {"TransactionalId": None})["ProducerEpoch"] == 2
        assert conn.request("Produce", 9, {"Acks": 0}) == {}  # acks=0: no response on the wire
        assert conn.request("Produce", None, {"Acks": -1}) == {
            "Responses": [],
            "ThrottleTimeMs": 0,
            "NodeEndpoints": [],
        }
        assert conn.negotiated_version("Produce") == 11
        with pytest.raises(UnsupportedApiError, match="does not support EndTxn"):
            conn.request("EndTxn", None, {})
    requests = broker.seen
    assert [r.correlation_id for r in requests] == list(range(1, len(requests) + 1))
    assert {r.client_id for r in requests} == {"t"}
    assert requests[0].api_key == 18 and requests[0].body["ClientSoftwareName"] == "eoslab"


def test_api_versions_falls_back_when_broker_is_older(schemas: Schemas, broker: Any) -> None:
    port = broker(_kafka_like(schemas, {18: (0, 2), 22: (0, 4)}))
    with KafkaConnection("127.0.0.1", port, schemas=schemas) as conn:
        assert conn.api_versions()[22] == (0, 4)
    # the newest ApiVersions the pinned schemas know first (v5 since 4.4, KIP-1242), then the broker's highest
    assert [r.api_version for r in broker.seen] == [schemas.request("ApiVersions").valid_versions.highest, 2]


def test_timeout_is_a_connection_error(schemas: Schemas, broker: Any) -> None:
    port = broker(lambda request: None)  # never answers
    conn = KafkaConnection("127.0.0.1", port, timeout=0.2, schemas=schemas)
    with pytest.raises(KafkaConnectionError, match="timed out after 0.2s") as info:
        conn.request("InitProducerId", 0, {})
    assert isinstance(info.value, ConnectionError) and isinstance(info.value, ProtocolError)
    assert "closed" in repr(conn)


def test_refused_connection(schemas: Schemas) -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    with pytest.raises(KafkaConnectionError, match=f"cannot connect to 127.0.0.1:{port}"):
        KafkaConnection("127.0.0.1", port, timeout=1, schemas=schemas).request("ApiVersions", 0)


def test_peer_closing_mid_exchange(schemas: Schemas, broker: Any) -> None:
    # promises 100 bytes, sends 10, then closes
    port = broker(lambda r: struct.pack(">i", 100) + b"\x00" * 10, close_after_reply=True)
    conn = KafkaConnection("127.0.0.1", port, timeout=5, schemas=schemas)
    with pytest.raises(KafkaConnectionError, match="failed .*closed the connection"):
        conn.request("ApiVersions", 0)


def test_wrong_correlation_id(schemas: Schemas, broker: Any) -> None:
    port = broker(lambda r: protocol.encode_response(22, 0, r.correlation_id + 1, {}, schemas=schemas))
    with (
        KafkaConnection("127.0.0.1", port, timeout=1, schemas=schemas) as conn,
        pytest.raises(ProtocolError, match="correlation id"),
    ):
        conn.request("InitProducerId", 0, {})


def test_absurd_frame_size(schemas: Schemas, broker: Any) -> None:
    port = broker(lambda r: b"HTTP/1.1 400 Bad Request\r\n\r\n")
    with (
        KafkaConnection("127.0.0.1", port, timeout=1, schemas=schemas) as conn,
        pytest.raises(ProtocolError, match="not a Kafka"),
    ):
        conn.request("InitProducerId", 0, {})
