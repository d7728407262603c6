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
from typing import Any

import pytest
from _kafka_bytes import batch, record

from eoslab import protocol
from eoslab._ports import is_free
from eoslab._wait import wait_until
from eoslab.faults import RuleSpec
from eoslab.faults._proxy import ProxyEngine
from eoslab.faults._store import MAX_CAPTURE_FRAME
from eoslab.topology import Topology


class StandIn:
    """A 'broker' on broker 1's proxied port: records each request, answers Produce v10 with offset 0.

    Like Kafka, it answers nothing to an acks=0 Produce, and nothing to a frame it cannot decode.
    """

    def __init__(self, schemas: protocol.Schemas) -> None:
        self.schemas = schemas
        self.received: list[int] = []  # sizes of the requests that arrived

    async def serve(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = struct.unpack(">i", await r.readexactly(4))[0]
                payload = await r.readexactly(size)
                self.received.append(size)
                try:
                    req = protocol.decode_request(payload, schemas=self.schemas)
                except protocol.ProtocolError:
                    continue
                if req.body["Acks"] == 0:
                    continue
                body = {"Responses": [{"Name": "t", "PartitionResponses": [{"Index": 0, "BaseOffset": 0}]}]}
                w.write(
                    protocol.encode_response("Produce", req.api_version, req.correlation_id, body, schemas=self.schemas)
                )
                await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass


Rig = tuple[ProxyEngine, StandIn, int]


@pytest.fixture
def rig(schemas: protocol.Schemas) -> Iterator[Rig]:
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


def produce(schemas: protocol.Schemas, value_bytes: int, seq: int, acks: int = -1) -> bytes:
    records = batch([record(None, b"v" * value_bytes)], producer_id=42, producer_epoch=0, base_sequence=seq)
    body = {
        "Acks": acks,
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


def test_without_rules_a_big_produce_is_traced_but_not_kept(rig: Rig, schemas: protocol.Schemas) -> None:
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


def test_with_a_rule_set_a_big_produce_is_held_until_whole_so_the_rule_can_drop_it(
    rig: Rig, schemas: protocol.Schemas
) -> None:
    engine, broker, port = rig
    engine.rules.add(RuleSpec("drop_request", api="Produce", base_sequence=1))
    big = produce(schemas, 3 * MAX_CAPTURE_FRAME, 1)
    assert exchange(port, big, answer=False) is None  # no answer: the request never reached the broker
    assert broker.received == []
    (row,) = [r for r in engine.trace.rows if r["api"] == "Produce"]
    assert row["fate"] == "request dropped by proxy" and row["rules"]


def rows_of(engine: ProxyEngine, api: str) -> list[dict[str, Any]]:
    return [r for r in engine.trace.rows if r["api"] == api]


def test_a_late_request_reaches_the_broker_on_the_proxys_own_connection_and_its_answer_goes_to_the_trace(
    rig: Rig, schemas: protocol.Schemas
) -> None:
    engine, broker, port = rig
    engine.rules.add(RuleSpec("delay_request", api="Produce", delay_s=0.2))
    late = produce(schemas, 100, 0)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(late)
        wait_until(lambda: rows_of(engine, "Produce"), timeout=10, what="the held request's trace row")
        (row,) = rows_of(engine, "Produce")
        wait_until(lambda: "then delivered" in row["fate"], timeout=10, what="the held request's delivery")
        (conn,) = engine.conns.values()
        assert conn.pending == {}  # the client's connection waits for nothing: the answer is not its own
        s.settimeout(0.5)
        with pytest.raises(TimeoutError):
            s.recv(4)  # and the client waits in vain
    assert row["fate"] == "held 0.2 s, then delivered by the proxy (the client never sees the answer)"
    assert broker.received == [len(late) - 4]  # once, late
    assert row["response"]["items"][0]["base_offset"] == 0 and row["rules"]


def test_an_acks_0_produce_awaits_no_answer(rig: Rig, schemas: protocol.Schemas) -> None:
    engine, broker, port = rig
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(produce(schemas, 100, 0, acks=0))
        wait_until(lambda: broker.received, timeout=10, what="the acks=0 Produce at the broker")
        (conn,) = engine.conns.values()
        assert conn.pending == {}
    (row,) = rows_of(engine, "Produce")
    assert row["fate"] == "no response (acks=0)" and row["request"]["acks"] == 0


def test_a_cut_rule_closes_the_client_connection_and_the_broker_never_sees_the_request(
    rig: Rig, schemas: protocol.Schemas
) -> None:
    engine, broker, port = rig
    engine.rules.add(RuleSpec("cut", api="Produce", client_id="engine-test"))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(produce(schemas, 100, 0))
        assert s.recv(4) == b""  # closed by the proxy, no answer
    (row,) = rows_of(engine, "Produce")
    assert row["fate"] == "connection cut by proxy" and row["rules"]
    assert broker.received == []


def test_frames_the_proxy_cannot_read_are_traced_and_forwarded_untouched(rig: Rig, schemas: protocol.Schemas) -> None:
    engine, broker, port = rig
    unknown = struct.pack(">hhih", 9999, 0, 5, 2) + b"me"  # an api key the pinned schemas do not have
    short = b"\x00\x01"  # too short for a request header
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(struct.pack(">i", len(unknown)) + unknown + struct.pack(">i", len(short)) + short)
        wait_until(lambda: len(broker.received) == 2, timeout=10, what="both frames at the broker")
    assert broker.received == [len(unknown), len(short)]
    first, second = engine.trace.rows
    assert (first["api"], first["client_id"], first["correlation_id"]) == ("(api key 9999)", "me", 5)
    assert first["note"] == "api key unknown to the pinned schemas"
    assert (second["api"], second["client_id"], second["note"]) == (
        "(garbage)",
        "me",  # the connection's client.id, from its last readable header
        "2-byte frame too short for a request header",
    )
    assert {first["fate"], second["fate"]} == {"forwarded untouched"}
