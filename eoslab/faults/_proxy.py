"""The proxy engine: one listener per broker front port, two pumps per client connection.

Why raw bytes: the proxy must not slow the cluster it teaches about. A frame
is read as ``size + payload`` and written on unchanged; the header is peeked
(12 bytes), and only EOS APIs (and Metadata responses, for topic ids) are
decoded for the trace and the rules. Responses are matched to requests by
correlation id, which carries the api version a response decode needs.

Why never crash: anything the proxy does not understand (garbage, an unknown
api key, a frame the codec rejects) is forwarded untouched and noted in the
trace; a length prefix that cannot be a Kafka frame switches that connection
to a blind byte pipe.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from eoslab.faults._rules import Decision, RuleBook, facts_from
from eoslab.faults._store import Capture, CaptureStore, TraceStore
from eoslab.faults._summary import (
    DECODED_RESPONSES,
    EOS_API_KEYS,
    METADATA,
    PRODUCE,
    TopicNames,
    learn_topic_ids,
    summarize_request,
    summarize_response,
)
from eoslab.protocol import ProtocolError, decode_request, decode_response, default_schemas
from eoslab.topology import Node, Topology

log = logging.getLogger("eoslab.faults.proxy")

MAX_FRAME = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes is 100 MiB
CONNECT_TIMEOUT = 5.0  # loopback: a live broker accepts in microseconds; 5 s only covers a paused one
_SIZE = struct.Struct(">i")
_HDR = struct.Struct(">hhih")  # api key, api version, correlation id, client id length


class _Closed(Exception):
    """This connection is over (cut by a rule, or a peer went away)."""


@dataclass
class _Pending:
    api_key: int
    version: int
    row: dict[str, Any]
    decision: Decision


@dataclass
class Conn:
    """One client connection and its upstream connection to the broker."""

    id: int
    broker: Node
    client_w: asyncio.StreamWriter
    broker_w: asyncio.StreamWriter | None = None
    client_id: str | None = None
    pending: dict[int, _Pending] = field(default_factory=dict)
    closed: bool = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for w in (self.client_w, self.broker_w):
                if w is not None:
                    w.close()


def _nodelay(w: asyncio.StreamWriter) -> None:
    sock = w.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def peek_client_id(payload: bytes) -> str | None:
    """``client.id`` from a request header (v1 and v2 both keep an int16-length string there)."""
    n = _HDR.unpack_from(payload, 0)[3]
    if n < 0:
        return None
    return payload[10:10 + n].decode("utf-8", "replace")


class ProxyEngine:
    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.schemas = default_schemas()
        self.api_names = {k: s.api_name for k, s in self.schemas.requests.items()}
        self.rules = RuleBook()
        self.trace = TraceStore()
        self.captures = CaptureStore()
        self.topic_names: TopicNames = {}
        self.conns: dict[int, Conn] = {}
        self._ids = itertools.count(1)
        self.servers: list[asyncio.Server] = []

    async def start(self) -> None:
        for b in self.topology.brokers:
            server = await asyncio.start_server(functools.partial(self._accept, b), "127.0.0.1",
                                                b.proxy_front_port, reuse_address=True)
            self.servers.append(server)

    # ------------------------------------------------------------------ connections

    async def _accept(self, broker: Node, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        conn = Conn(next(self._ids), broker, client_w)
        try:
            broker_r, broker_w = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", broker.proxied_port), CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            # A dead broker must look dead at once, not after the client's own timeout.
            self.trace.add(conn=conn.id, client_id=None, broker=broker.node_id, api="(connect)", version=None,
                           correlation_id=None, fate="client socket closed",
                           note=f"{broker.name} unreachable at 127.0.0.1:{broker.proxied_port} "
                                f"({type(exc).__name__}: {exc})")
            client_w.close()
            return
        conn.broker_w = broker_w
        _nodelay(client_w)
        _nodelay(broker_w)
        self.conns[conn.id] = conn
        up = asyncio.ensure_future(self._upstream(conn, client_r, broker_w))
        down = asyncio.ensure_future(self._downstream(conn, broker_r, client_w))
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            conn.close()
            for t in (up, down):
                t.cancel()
            await asyncio.gather(up, down, return_exceptions=True)
            self.conns.pop(conn.id, None)
            for p in conn.pending.values():
                if p.row["fate"] in ("pending", "delayed"):
                    p.row["fate"] = "connection closed before the response"

    def cut(self, client_id: str | None = None, broker: int | None = None) -> int:
        """Close live connections now (all, or of one client.id / broker)."""
        doomed = [c for c in self.conns.values() if (client_id is None or c.client_id == client_id)
                  and (broker is None or c.broker.node_id == broker)]
        for c in doomed:
            self.trace.add(conn=c.id, client_id=c.client_id, broker=c.broker.node_id, api="(cut)", version=None,
                           correlation_id=None, fate="connection cut by proxy", note="cut through the control API")
            c.close()
        return len(doomed)

    async def _pipe(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        while data := await r.read(65536):
            w.write(data)
            await w.drain()

    # ------------------------------------------------------------------ client -> broker

    async def _upstream(self, conn: Conn, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await r.readexactly(4)
                size = _SIZE.unpack(head)[0]
                if not 0 <= size <= MAX_FRAME:
                    self.trace.add(conn=conn.id, client_id=conn.client_id, broker=conn.broker.node_id,
                                   api="(garbage)", version=None, correlation_id=None, fate="forwarded untouched",
                                   note=f"length prefix {size} is not a Kafka frame: raw byte pipe from here on")
                    w.write(head)
                    await self._pipe(r, w)
                    return
                payload = await r.readexactly(size)
                if self._on_request(conn, head, payload):
                    w.write(head + payload if size < 16384 else head)
                    if size >= 16384:
                        w.write(payload)
                    if w.transport.get_write_buffer_size() > 1 << 20:
                        await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError, _Closed):
            return

    def _on_request(self, conn: Conn, head: bytes, payload: bytes) -> bool:
        """Trace the request and apply the rules; True when it is to be forwarded."""
        broker = conn.broker.node_id
        try:
            api_key, version, corr, _ = _HDR.unpack_from(payload, 0)
            client_id = peek_client_id(payload)
        except (struct.error, UnicodeError):
            self.trace.add(conn=conn.id, client_id=conn.client_id, broker=broker, api="(garbage)", version=None,
                           correlation_id=None, fate="forwarded untouched",
                           note=f"{len(payload)}-byte frame too short for a request header")
            return True
        conn.client_id = client_id
        name = self.api_names.get(api_key)
        if name is None:
            self.trace.add(conn=conn.id, client_id=client_id, broker=broker, api=f"(api key {api_key})",
                           version=version, correlation_id=corr, fate="forwarded untouched",
                           note="api key unknown to the pinned schemas")
            return True
        summary: dict[str, Any] = {}
        note = ""
        if api_key in EOS_API_KEYS:
            try:
                summary = summarize_request(decode_request(payload, schemas=self.schemas), self.topic_names)
            except (ProtocolError, KeyError, ValueError) as exc:
                note = f"request not decoded ({exc}); forwarded untouched"
        decision = self.rules.decide(facts_from(name, client_id, broker, summary)) if len(self.rules) else Decision()
        row = self.trace.add(conn=conn.id, client_id=client_id, broker=broker, api=name, version=version,
                             correlation_id=corr, request=summary, note=note, rules=decision.rule_ids)
        if api_key == PRODUCE and summary.get("items"):
            self.captures.add(Capture(row["id"], broker, client_id, head, payload, tuple(summary["items"]),
                                      summary.get("acks", -1)))
        if decision.cut:
            row["fate"] = "connection cut by proxy"
            conn.close()
            raise _Closed
        if decision.drop_request:
            row["fate"] = "request dropped by proxy"
            if decision.close:
                conn.close()
                raise _Closed
            return False
        if api_key == PRODUCE and summary.get("acks") == 0:
            row["fate"] = "no response (acks=0)"
        else:
            conn.pending[corr] = _Pending(api_key, version, row, decision)
        return True

    # ------------------------------------------------------------------ broker -> client

    async def _downstream(self, conn: Conn, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await r.readexactly(4)
                size = _SIZE.unpack(head)[0]
                if not 4 <= size <= MAX_FRAME:
                    w.write(head)
                    await self._pipe(r, w)
                    return
                payload = await r.readexactly(size)
                p = conn.pending.pop(_SIZE.unpack_from(payload, 0)[0], None)
                if p is not None:
                    d = self._on_response(p, payload)
                    if d.delay_s:
                        await asyncio.sleep(d.delay_s)  # this pump is the only writer: later answers wait
                        p.row["fate"] = f"delayed {d.delay_s:g} s"
                    if d.drop_response:
                        p.row["fate"] = "response dropped by proxy" + (", connection closed" if d.close else "")
                        if d.close:
                            conn.close()
                            return
                        continue
                w.write(head + payload if size < 16384 else head)
                if size >= 16384:
                    w.write(payload)
                if w.transport.get_write_buffer_size() > 1 << 20:
                    await w.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return

    def _on_response(self, p: _Pending, payload: bytes) -> Decision:
        row = p.row
        row["response_time"] = time.time()
        row["fate"] = "forwarded"
        if p.api_key in DECODED_RESPONSES:
            try:
                resp = decode_response(payload, p.api_key, p.version, schemas=self.schemas)
                if p.api_key == METADATA:
                    learn_topic_ids(resp, self.topic_names)
                row["response"] = summarize_response(resp, row["request"], self.topic_names)
            except (ProtocolError, KeyError, ValueError) as exc:
                row["note"] = (row["note"] + "; " if row["note"] else "") + f"response not decoded ({exc})"
        return p.decision
