"""The proxy keeps ApiVersions' tagged fields: the Java 4.x client learns transaction.version=2 from them.

A stand-in broker answers with the ApiVersions v4 response bytes recorded from the
real 4.1.2 broker (tests/data/inspect/api_versions_v4_response.hex). If the proxy
re-encoded frames and dropped tagged fields, a Java client would silently fall
back to the original transaction protocol; the end-to-end proof (the Java client
sends EndTxn v5 and no AddPartitionsToTxn through the proxy) is
tests/integration/m03/test_transactions_protocols.py.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from pathlib import Path

import pytest

from eoslab import protocol
from eoslab._ports import is_free
from eoslab.faults._proxy import ProxyEngine
from eoslab.topology import Topology

RECORDED = bytes.fromhex(
    (Path(__file__).resolve().parents[1] / "data" / "inspect" / "api_versions_v4_response.hex").read_text().strip()
)
CORRELATION = 7  # the recording's request used correlation id 7


@pytest.fixture
def front_port():
    topo = next(
        t
        for t in (Topology(port_offset=o) for o in range(12100, 15000, 100))
        if all(is_free(p) for b in t.brokers for p in (b.proxied_port, b.proxy_front_port))
    )
    loop = asyncio.new_event_loop()
    engine = ProxyEngine(topo)

    async def broker(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        size = struct.unpack(">i", await r.readexactly(4))[0]
        await r.readexactly(size)
        w.write(RECORDED)
        await w.drain()

    server = loop.run_until_complete(asyncio.start_server(broker, "127.0.0.1", topo.brokers[0].proxied_port))
    loop.run_until_complete(engine.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield engine, topo.brokers[0].proxy_front_port

    async def shut() -> None:
        for s in [server, *engine.servers]:
            s.close()
        engine.cut()

    asyncio.run_coroutine_threadsafe(shut(), loop).result(5)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_the_recorded_answer_carries_the_finalized_features_in_tagged_fields(schemas):
    body = protocol.decode_response(RECORDED[4:], "ApiVersions", 4).body
    assert {f["Name"]: f["MaxVersionLevel"] for f in body["FinalizedFeatures"]}["transaction.version"] == 2
    fields = {f.name: f for f in schemas.response("ApiVersions").fields}
    for name in ("SupportedFeatures", "FinalizedFeaturesEpoch", "FinalizedFeatures"):
        assert fields[name].tag is not None, name  # KIP-584 put them in the tagged-field section


def test_apiversions_answer_reaches_the_client_byte_for_byte_and_the_trace_reads_tv2(front_port):
    engine, port = front_port
    request = protocol.encode_request(
        "ApiVersions", 4, CORRELATION, "java-like", {"ClientSoftwareName": "x", "ClientSoftwareVersion": "1"}
    )
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        head = s.recv(4, socket.MSG_WAITALL)
        payload = s.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
    assert head + payload == RECORDED
    (row,) = [r for r in engine.trace.rows if r["api"] == "ApiVersions"]
    assert row["response"]["finalized_features"]["transaction.version"] == 2
    assert row["fate"] == "forwarded"
