"""The proxy engine between a socket client and a stand-in broker: when frames may flow on, what is kept.

The stand-in answers Produce like a broker would on the wire (same codec), so
these tests need no cluster; that Kafka itself behaves as the trace says is
tested against the real cluster in tests/integration/test_faults_*.py.
"""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Iterator

import pytest
from _kafka_bytes import batch, record

from eoslab import protocol
from eoslab._ports import is_free
from eoslab.faults import RuleSpec
from eoslab.faults._proxy import ProxyEngine
from eoslab.faults._store import MAX_CAPTURE_FRAME
from eoslab.topology import Topology


class StandIn:
    """A 'broker' on broker 1's proxied port: records each request, answers Produce v10 with offset 0."""

    def __init__(self, schemas: protocol.Schemas) -> None:
        self.schemas = schemas
        self.received: list[int] = []  # sizes of the requests that arrived

    async def serve(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = struct.unpack(">i", await r.readexactly(4))[0]
                req = protocol.decode_request(await r.readexactly(size), schemas=self.schemas)
                self.received.append(size)
                body = {"Responses": [{"Name": "t", "PartitionResponses": [{"Index": 0, "BaseOffset": 0}]}]}
                w.write(
                    protocol.encode_response("Produce", req.api_version, req.correlation_id, body, schemas=self.schemas)
                )
                await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass


@pytest.fixture
def rig(schemas: protocol.Schemas) -> Iterator[tuple[ProxyEngine, StandIn, int]]:
    topo = next(
        t
        for t in (Topology(port_offset=o) for o in range(9100, 12000, 100))
        if all(is_free(p) for b in t.brokers for p in (b.proxied_port, b.proxy_front_port))
    )
    loop = asyncio.new_event_loop()
    engine, broker = ProxyEngine(topo), StandIn(schemas)
    server = loop.run_until_complete(asyncio.start_server(broker.serve, "127.0.0.1", topo.brokers[0].proxied_port))
    loop.run_until_complete(engine.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield engine, broker, topo.brokers[0].proxy_front_port

    async def shut() -> None:
        for s in [server, *engine.servers]:
            s.close()
        engine.cut()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run_coroutine_threadsafe(shut(), loop).result(5)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def produce(schemas: protocol.Schemas, value_bytes: int, seq: int) -> bytes:
    records = batch([record(None, b"v" * value_bytes)], producer_id=42, producer_epoch=0, base_sequence=seq)
    body = {
        "Acks": -1,
        "TimeoutMs": 30000,
        "TopicData": [{"Name": "t", "PartitionData": [{"Index": 0, "Records": records}]}],
    }
    return protocol.encode_request("Produce", 10, seq + 1, "engine-test", body, schemas=schemas)


def exchange(port: int, frame: bytes, answer: bool = True) -> bytes | None:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(frame)
        if not answer:
            s.settimeout(1.0)
            try:
                return s.recv(4) or None
            except TimeoutError:
                return None
        head = s.recv(4, socket.MSG_WAITALL)
        return s.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)


def test_without_rules_a_big_produce_is_traced_but_not_kept(rig, schemas):
    engine, broker, port = rig
    small, big = produce(schemas, 100, 0), produce(schemas, 3 * MAX_CAPTURE_FRAME, 1)
    assert exchange(port, small) and exchange(port, big)
    assert broker.received == [len(small) - 4, len(big) - 4]
    rows = [r for r in engine.trace.rows if r["api"] == "Produce"]
    assert [r["request"]["items"][0]["base_sequence"] for r in rows] == [0, 1]
    assert [r["response"]["items"][0]["base_offset"] for r in rows] == [0, 0]
    assert [r["fate"] for r in rows] == ["forwarded", "forwarded"]
    assert engine.captures.find(row_id=rows[0]["id"]) is not None  # small: kept for replay
    assert engine.captures.find(row_id=rows[1]["id"]) is None  # big: traced, not copied


def test_with_a_rule_set_a_big_produce_is_held_until_whole_so_the_rule_can_drop_it(rig, schemas):
    engine, broker, port = rig
    engine.rules.add(RuleSpec("drop_request", api="Produce", base_sequence=1))
    big = produce(schemas, 3 * MAX_CAPTURE_FRAME, 1)
    assert exchange(port, big, answer=False) is None  # no answer: the request never reached the broker
    assert broker.received == []
    (row,) = [r for r in engine.trace.rows if r["api"] == "Produce"]
    assert row["fate"] == "request dropped by proxy" and row["rules"]
