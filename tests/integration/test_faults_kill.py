"""A killed broker behind the proxy: the client's socket is closed at once, not left to time out."""

from __future__ import annotations

import socket
import time

import pytest
from _timing import SLACK, slowest

from eoslab.faults import Proxy, ensure_proxy
from eoslab.protocol import KafkaConnection, KafkaConnectionError

pytestmark = [pytest.mark.cluster, pytest.mark.destructive]


def test_killed_broker_closes_the_proxied_connection_at_once(healed):
    cluster = healed
    ensure_proxy(cluster)
    front = cluster.topology.broker(3).proxy_front_port
    conn = KafkaConnection("127.0.0.1", front, client_id="kill-test").connect()
    assert conn.api_versions()  # the connection works end to end before the kill
    sock = conn._sock  # we watch the very socket the proxy must close
    assert sock is not None
    # The baseline: a full round trip through the proxy to a live broker (more work than relaying a close).
    with KafkaConnection("127.0.0.1", cluster.topology.broker(1).proxy_front_port, client_id="kill-base") as live:

        def round_trip() -> object:
            return live.request("Metadata", None, {"Topics": [], "AllowAutoTopicCreation": False})

        before = slowest(round_trip)
        cluster.kill("broker-3")
        t0 = time.monotonic()
        sock.settimeout(5.0)
        try:
            data = sock.recv(1)
        except (TimeoutError, ConnectionResetError) as exc:
            data = type(exc).__name__.encode()
        closed_after = time.monotonic() - t0
        after = slowest(round_trip)  # the load right after the kill counts too
    conn.close()
    assert data in (b"", b"ConnectionResetError"), f"socket still open after {closed_after:.1f} s ({data!r})"
    baseline = max(before, after)
    assert closed_after < SLACK * baseline, f"closed after {closed_after:.3f} s; a round trip took {baseline:.3f} s"
    # and a new connection to the dead broker's front is refused or closed at once
    with socket.create_connection(("127.0.0.1", front), timeout=5) as s:
        s.settimeout(3.0)
        assert s.recv(1) == b""
    # a raw request through the proxy says why, in the proxy's own words
    with pytest.raises(KafkaConnectionError, match=r"The proxy says: broker-3 unreachable at 127\.0\.0\.1:"):
        Proxy.connect(cluster).request(3, "ApiVersions", {}, version=0, client_id="kill-raw")
