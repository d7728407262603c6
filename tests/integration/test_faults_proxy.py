"""The proxy itself on the real cluster: raw requests, robustness, delays, drops, cuts, Java's topic ids."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
import uuid

import pytest

from eoslab import protocol
from eoslab._ports import is_free
from eoslab._wait import wait_until
from eoslab.faults import Proxy, ensure_proxy
from eoslab.faults._proxy import CONNECT_TIMEOUT, ProxyEngine
from eoslab.protocol import KafkaConnectionError
from eoslab.topology import Topology

pytestmark = pytest.mark.cluster


def _cid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _last_id(proxy: Proxy) -> int:
    rows = proxy.trace()
    return rows[-1]["id"] if rows else 0


def test_ensure_proxy_is_a_no_op_when_running(cluster, proxy):
    assert ensure_proxy(cluster) == proxy.health()["pid"]
    assert proxy.health()["port_offset"] == cluster.topology.port_offset


def test_raw_init_producer_id_goes_to_the_chosen_broker_and_is_traced(proxy):
    """A broker without a producer-id block (e.g. just restarted) first answers
    COORDINATOR_LOAD_IN_PROGRESS (14) while it asks the controller for one: retry, as clients do."""
    cid = _cid("raw")
    for broker in (2, 3):

        def grant(broker: int = broker) -> dict | None:
            answer = proxy.request(
                broker, "InitProducerId", {"TransactionalId": None, "TransactionTimeoutMs": 60000}, client_id=cid
            )
            return answer if answer["ErrorCode"] != 14 else None  # 14: retry, as clients do

        answer = wait_until(grant, timeout=15, interval=0.1, what=f"broker {broker} to grant a producer id")
        assert (
            answer is not None
            and answer["ErrorCode"] == 0
            and answer["ProducerId"] >= 0
            and answer["ProducerEpoch"] == 0
        )
    rows = [r for r in proxy.trace(client_id=cid, api="InitProducerId") if r["response"]["error"] == "NONE"]
    assert [r["broker"] for r in rows] == [2, 3]
    refused = [r for r in proxy.trace(client_id=cid, api="InitProducerId") if r["response"]["error"] != "NONE"]
    assert all(r["response"]["error"] == "COORDINATOR_LOAD_IN_PROGRESS" for r in refused)
    assert all(r["response"]["producer_id"] >= 0 for r in rows)
    df = proxy.trace(client_id=cid).frame()
    granted = df[(df.api == "InitProducerId") & (df.error == "NONE")]
    assert list(granted.broker) == [2, 3]


def test_garbage_and_unknown_api_keys_are_forwarded_and_the_proxy_keeps_serving(cluster, proxy):
    cid = _cid("garbage")
    since = _last_id(proxy)
    port = cluster.topology.broker(1).proxy_front_port
    unknown = struct.pack(">hhih", 999, 0, 7, len(cid)) + cid.encode()
    bad_produce = struct.pack(">hhih", 0, 9, 8, len(cid)) + cid.encode() + b"\x00" * 3
    for payload in (
        b"\xff\xff\xff\xffnot kafka at all",
        struct.pack(">i", len(unknown)) + unknown,
        struct.pack(">i", len(bad_produce)) + bad_produce,
        b"\x00\x00\x00\x02\x00\x01",
    ):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            while s.recv(4096):  # the broker (not the proxy) ends these connections
                pass
    rows = proxy.trace(since=since)
    notes = [(r["api"], r["note"]) for r in rows]
    assert any(api == "(garbage)" and "not a Kafka frame" in note for api, note in notes)
    assert any(api == "(garbage)" and "too short for a request header" in note for api, note in notes)
    assert any(api == "(api key 999)" for api, _ in notes)
    assert any(r["api"] == "Produce" and "not decoded" in r["note"] for r in rows if r["client_id"] == cid)
    answer = proxy.request(
        1, "ApiVersions", {"ClientSoftwareName": "t", "ClientSoftwareVersion": "0"}, client_id=_cid("after-garbage")
    )
    assert answer["ErrorCode"] == 0
    assert proxy.health()["pid"]


def test_delayed_response_keeps_the_order_of_the_connection(cluster, proxy):
    cid = _cid("delay")
    frames = [
        protocol.encode_request("ApiVersions", 3, 1, cid, {"ClientSoftwareName": "t", "ClientSoftwareVersion": "0"}),
        protocol.encode_request(
            "Metadata",
            12,
            2,
            cid,
            {"Topics": [], "AllowAutoTopicCreation": False, "IncludeTopicAuthorizedOperations": False},
        ),
    ]
    with (
        proxy.delay_response(1.0, api="ApiVersions", client_id=cid),
        socket.create_connection(("127.0.0.1", cluster.topology.broker(1).proxy_front_port), timeout=10) as s,
    ):
        t0 = time.monotonic()
        s.sendall(b"".join(frames))
        order = []
        for _ in frames:
            size = struct.unpack(">i", _recv(s, 4))[0]
            order.append((protocol.peek_correlation_id(_recv(s, size)), time.monotonic() - t0))
    assert [c for c, _ in order] == [1, 2]
    assert order[0][1] >= 1.0 and order[1][1] >= 1.0  # Metadata was answered at once but waited its turn
    fates = [r["fate"] for r in proxy.trace(client_id=cid)]
    assert fates == ["delayed 1 s", "forwarded"]


def _recv(s: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        assert chunk, "connection closed"
        buf += chunk
    return buf


def test_dropped_request_never_gets_an_answer(proxy):
    cid = _cid("dropreq")
    with proxy.drop_request(api="InitProducerId", client_id=cid) as fault:
        with pytest.raises(KafkaConnectionError, match="timed out"):
            conn = protocol.KafkaConnection("127.0.0.1", proxy.topology.broker(1).proxy_front_port, cid, timeout=2)
            with conn:
                conn.request("InitProducerId", None, {"TransactionalId": None, "TransactionTimeoutMs": 60000})
        assert fault.fired == 1
    assert proxy.trace(client_id=cid, api="InitProducerId")[0]["fate"] == "request dropped by proxy"


def test_cut_on_a_request_and_cut_now(proxy):
    cid = _cid("cut")
    port = proxy.topology.broker(3).proxy_front_port
    with proxy.cut_on(api="Metadata", client_id=cid):
        with protocol.KafkaConnection("127.0.0.1", port, cid, timeout=5) as conn:
            with pytest.raises(KafkaConnectionError):
                conn.request(
                    "Metadata",
                    12,
                    {"Topics": [], "AllowAutoTopicCreation": False, "IncludeTopicAuthorizedOperations": False},
                )
    with protocol.KafkaConnection("127.0.0.1", port, cid, timeout=5) as conn:
        conn.api_versions()
        assert proxy.cut(client_id=cid) == 1
        with pytest.raises(KafkaConnectionError):
            conn.request("ApiVersions", 3, {"ClientSoftwareName": "t", "ClientSoftwareVersion": "0"})
    fates = [r["fate"] for r in proxy.trace(client_id=cid)]
    assert "connection cut by proxy" in fates


def test_unreachable_broker_closes_the_client_socket_at_once():
    """An engine whose brokers' proxied ports nobody listens on: the client must see EOF at once."""
    topo = next(
        t
        for t in (Topology(port_offset=o) for o in range(7300, 9000, 100))
        if all(is_free(p) for b in t.brokers for p in (b.proxied_port, b.proxy_front_port))
    )
    loop = asyncio.new_event_loop()
    engine = ProxyEngine(topo)
    loop.run_until_complete(engine.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        # The competing cause of a close is the proxy's own connect timeout: the socket waits longer than
        # that, so a proxy that waited for it would be caught by the bound below, not by this timeout.
        front = topo.brokers[0].proxy_front_port
        with socket.create_connection(("127.0.0.1", front), timeout=2 * CONNECT_TIMEOUT) as s:
            t0 = time.monotonic()
            assert s.recv(1) == b""
            assert time.monotonic() - t0 < CONNECT_TIMEOUT
        rows = list(engine.trace.rows)
        assert rows[-1]["api"] == "(connect)" and "unreachable" in rows[-1]["note"]
        assert "ConnectionRefusedError" in rows[-1]["note"]  # closed BECAUSE the broker refused, at once
    finally:
        for server in engine.servers:
            loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def test_java_client_topic_ids_are_named_from_relayed_metadata(cluster, proxy, topic_name):
    """Java 4.x producers send Produce v13 with a TopicId only; the trace still names the topic."""
    cluster.admin.create_topic(topic_name, partitions=1)
    cid = _cid("java")
    cluster.tool(
        "producer-perf-test",
        "--topic",
        topic_name,
        "--num-records",
        "20",
        "--record-size",
        "10",
        "--throughput",
        "-1",
        "--producer-props",
        f"bootstrap.servers={cluster.bootstrap_servers(True)}",
        f"client.id={cid}",
        "acks=all",
        "enable.idempotence=true",
    )
    produce = proxy.trace(client_id=cid, api="Produce")
    assert produce and all(r["version"] == 13 for r in produce)
    items = [i for r in produce for i in r["request"]["items"]]
    assert {i["topic"] for i in items} == {topic_name}
    assert sum(i["record_count"] for i in items) == 20 and items[0]["base_sequence"] == 0
    assert {i["topic"] for r in produce for i in r["response"]["items"]} == {topic_name}


def test_heal_clears_every_rule(cluster, proxy):
    from eoslab.faults import clear_faults

    proxy.drop_response(api="Produce", client_id=_cid("heal")).inject()
    proxy.cut_on(api="Fetch").inject()
    assert clear_faults(cluster.topology) >= 2  # what eoslab.heal(cluster) calls first
    assert proxy.rules() == []


def test_stop_then_ensure_restarts_the_daemon(cluster, proxy):
    """Last in this module: it restarts the daemon (rules and trace are gone afterwards)."""
    from eoslab.faults import ProxyNotRunning, stop_proxy

    old = proxy.health()["pid"]
    assert stop_proxy(cluster.topology) is True
    with pytest.raises(ProxyNotRunning, match="The fault proxy is not running .* run `eoslab up`"):
        proxy.health()
    assert stop_proxy(cluster.topology) is False
    new = ensure_proxy(cluster)
    assert new != old and proxy.health()["pid"] == new and proxy.trace() == []


def test_a_proxied_client_starts_the_proxy_it_needs(cluster, proxy):
    """Seen in CI: a worker whose cluster was started without its proxy; every proxied read timed out on
    "Connection refused". A client built with ``proxied=True`` now starts the proxy first."""
    from eoslab.clients import consumer
    from eoslab.faults import ProxyNotRunning, stop_proxy

    stop_proxy(cluster.topology)
    with pytest.raises(ProxyNotRunning):
        proxy.health()
    c = consumer(cluster, _cid("proxied-start"), isolation="read_committed", proxied=True)
    try:
        assert proxy.health()["port_offset"] == cluster.topology.port_offset
        assert len(c.list_topics(timeout=10).brokers) == 3  # the metadata came through the proxy's front ports
    finally:
        c.close()
