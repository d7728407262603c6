"""The proxy engine: one listener per broker front port; what to do with each frame.

The bytes themselves move in :mod:`eoslab.faults._pump` (a BufferedProtocol per
socket, frames found in place, runs of them forwarded with one write). This
module decides: the 12-byte request header is peeked, and only EOS APIs (and
Metadata responses, for topic ids) are decoded for the trace and the rules.
Responses are matched to requests by correlation id, which carries the api
version a response decode needs.

Why never crash: anything the proxy does not understand (garbage, an unknown
api key, a frame the codec rejects) is forwarded untouched and noted in the
trace; a length prefix that cannot be a Kafka frame switches that direction
of the connection to a blind byte pipe.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eoslab._ports import LOOPBACK
from eoslab.faults._exchange import exchange
from eoslab.faults._pump import Act, Half
from eoslab.faults._rules import Decision, RuleBook, facts_from
from eoslab.faults._store import MAX_CAPTURE_FRAME, Capture, CaptureStore, TraceStore
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

CONNECT_TIMEOUT = 5.0  # loopback: a live broker accepts in microseconds; 5 s only covers a paused one
_SIZE = struct.Struct(">i")
_HDR = struct.Struct(">hhih")  # api key, api version, correlation id, client id length
_DROP = Act(forward=False)
_DROP_CLOSE = Act(forward=False, close=True)


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
    client: Half | None = None  # the client's socket
    upstream: Half | None = None  # our socket to the broker
    client_id: str | None = None
    pending: dict[int, _Pending] = field(default_factory=dict)
    closed: bool = False
    on_close: Callable[[Conn], None] | None = None

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for half in (self.client, self.upstream):
                if half is not None:
                    half.close()
            if self.on_close is not None:
                self.on_close(self)


def peek_client_id(payload: bytes | memoryview) -> str | None:
    """``client.id`` from a request header (v1 and v2 both keep an int16-length string there)."""
    n = _HDR.unpack_from(payload, 0)[3]
    if n < 0:
        return None
    return bytes(payload[10 : 10 + n]).decode("utf-8", "replace")


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
        loop = asyncio.get_running_loop()
        for b in self.topology.brokers:
            server = await loop.create_server(
                functools.partial(self._accept, b), LOOPBACK, b.proxy_front_port, reuse_address=True
            )
            self.servers.append(server)

    # ------------------------------------------------------------------ connections

    def _accept(self, broker: Node) -> Half:
        """A client connected to ``broker``'s front port: its socket's protocol, and the upstream to come."""
        conn = Conn(next(self._ids), broker, on_close=self._closed)
        conn.client = Half(
            functools.partial(self._on_request, conn),
            functools.partial(self._garbage, conn),
            conn.close,
            min_size=0,
            on_made=functools.partial(self._connect, conn),
            may_stream=self._request_may_stream,
        )
        conn.upstream = Half(
            functools.partial(self._on_response, conn),
            lambda size: None,
            conn.close,
            min_size=4,
            may_stream=functools.partial(self._response_may_stream, conn),
        )
        conn.client.peer, conn.upstream.peer = conn.upstream, conn.client
        return conn.client

    def _connect(self, conn: Conn) -> None:
        """The client socket is up: hold its bytes until the broker side is connected too."""
        assert conn.client is not None and conn.client.transport is not None
        conn.client.transport.pause_reading()
        self.conns[conn.id] = conn
        asyncio.ensure_future(self._dial(conn))

    async def _dial(self, conn: Conn) -> None:
        loop = asyncio.get_running_loop()
        port, upstream = conn.broker.proxied_port, conn.upstream
        assert upstream is not None
        try:
            await asyncio.wait_for(loop.create_connection(lambda: upstream, LOOPBACK, port), CONNECT_TIMEOUT)
        except (OSError, asyncio.TimeoutError) as exc:
            # A dead broker must look dead at once, not after the client's own timeout.
            self.trace.add(
                conn=conn.id,
                client_id=None,
                broker=conn.broker.node_id,
                api="(connect)",
                version=None,
                correlation_id=None,
                fate="client socket closed",
                note=f"{conn.broker.name} unreachable at {LOOPBACK}:{port} ({type(exc).__name__}: {exc})",
            )
            conn.close()
            return
        if conn.closed:  # the client left while we dialled
            upstream.close()
            return
        assert conn.client is not None
        conn.client.resume()

    def _closed(self, conn: Conn) -> None:
        self.conns.pop(conn.id, None)
        for p in conn.pending.values():
            if p.row["fate"] in ("pending", "delayed"):
                p.row["fate"] = "connection closed before the response"

    def cut(self, client_id: str | None = None, broker: int | None = None) -> int:
        """Close live connections now (all, or of one client.id / broker)."""
        doomed = [
            c
            for c in self.conns.values()
            if (client_id is None or c.client_id == client_id) and (broker is None or c.broker.node_id == broker)
        ]
        for c in doomed:
            self.trace.add(
                conn=c.id,
                client_id=c.client_id,
                broker=c.broker.node_id,
                api="(cut)",
                version=None,
                correlation_id=None,
                fate="connection cut by proxy",
                note="cut through the control API",
            )
            c.close()
        return len(doomed)

    def _garbage(self, conn: Conn, size: int) -> None:
        self.trace.add(
            conn=conn.id,
            client_id=conn.client_id,
            broker=conn.broker.node_id,
            api="(garbage)",
            version=None,
            correlation_id=None,
            fate="forwarded untouched",
            note=f"length prefix {size} is not a Kafka frame: raw byte pipe from here on",
        )

    # ------------------------------------------------------------------ client -> broker

    def _request_may_stream(self, head: memoryview) -> bool:
        """A request may flow on before it is whole when no rule could hold it back (none are set)."""
        return not len(self.rules)

    def _response_may_stream(self, conn: Conn, head: memoryview) -> bool:
        """A response may flow on before it is whole when no rule fired on its request."""
        if len(head) < 8:
            return False  # its correlation id has not arrived yet
        p = conn.pending.get(_SIZE.unpack_from(head, 4)[0])
        return p is None or not p.decision

    def _on_request(self, conn: Conn, frame: memoryview, streamed: bool) -> Act | None:
        """Trace the request and apply the rules (unless it already flowed on); None forwards it as it is."""
        broker = conn.broker.node_id
        try:
            api_key, version, corr, _ = _HDR.unpack_from(frame, 4)
            client_id = peek_client_id(frame[4:])
        except (struct.error, UnicodeError):
            self.trace.add(
                conn=conn.id,
                client_id=conn.client_id,
                broker=broker,
                api="(garbage)",
                version=None,
                correlation_id=None,
                fate="forwarded untouched",
                note=f"{len(frame) - 4}-byte frame too short for a request header",
            )
            return None
        conn.client_id = client_id
        name = self.api_names.get(api_key)
        if name is None:
            self.trace.add(
                conn=conn.id,
                client_id=client_id,
                broker=broker,
                api=f"(api key {api_key})",
                version=version,
                correlation_id=corr,
                fate="forwarded untouched",
                note="api key unknown to the pinned schemas",
            )
            return None
        summary: dict[str, Any] = {}
        note = ""
        kept: bytes | None = None  # a small Produce is copied and kept for a replay; the rest is read in place
        if api_key in EOS_API_KEYS:
            if api_key == PRODUCE and len(frame) - 4 <= MAX_CAPTURE_FRAME:
                kept = bytes(frame[4:])
            try:
                request = decode_request(frame[4:] if kept is None else kept, schemas=self.schemas)
                summary = summarize_request(request, self.topic_names)
            except (ProtocolError, KeyError, ValueError) as exc:
                note = f"request not decoded ({exc}); forwarded untouched"
        decision = (
            self.rules.decide(facts_from(name, client_id, broker, summary))
            if len(self.rules) and not streamed
            else Decision()
        )
        row = self.trace.add(
            conn=conn.id,
            client_id=client_id,
            broker=broker,
            api=name,
            version=version,
            correlation_id=corr,
            request=summary,
            note=note,
            rules=decision.rule_ids,
        )
        if kept is not None and summary.get("items"):
            self.captures.add(
                Capture(
                    row["id"],
                    broker,
                    client_id,
                    bytes(frame[:4]),
                    kept,
                    tuple(summary["items"]),
                    summary.get("acks", -1),
                )
            )
        if decision.cut:
            row["fate"] = "connection cut by proxy"
            return _DROP_CLOSE
        if decision.drop_request:
            row["fate"] = "request dropped by proxy"
            return _DROP_CLOSE if decision.close else _DROP
        if api_key == PRODUCE and summary.get("acks") == 0:
            row["fate"] = "no response (acks=0)"
        else:
            conn.pending[corr] = _Pending(api_key, version, row, decision)
        if decision.delay_request_s:
            # A late request: off the client's connection now (the client waits in vain, as for a request
            # stuck in the network), onto the broker delay_s later on the proxy's own connection.
            conn.pending.pop(corr, None)
            row["fate"] = f"held {decision.delay_request_s:g} s by proxy"
            row["held_s"] = decision.delay_request_s
            asyncio.get_running_loop().call_later(
                decision.delay_request_s, self._deliver_late, conn.broker, row, api_key, version, bytes(frame)
            )
            return _DROP
        return None

    def _deliver_late(self, broker: Node, row: dict[str, Any], api_key: int, version: int, frame: bytes) -> None:
        """Send a held request on the proxy's own connection; its answer goes to the trace, never to the client."""

        async def deliver() -> None:
            held = row["held_s"]
            try:
                data = await exchange(broker.proxied_port, frame, expect_response=row["fate"] != "no response (acks=0)")
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as exc:
                row["fate"] = f"held {held:g} s, then not delivered ({type(exc).__name__}: {exc})"
                return
            row["fate"] = f"held {held:g} s, then delivered by the proxy (the client never sees the answer)"
            row["response_time"] = time.time()
            if data is not None and api_key in DECODED_RESPONSES:
                try:
                    resp = decode_response(data, api_key, version, schemas=self.schemas)
                    row["response"] = summarize_response(resp, row["request"], self.topic_names)
                except (ProtocolError, KeyError, ValueError) as exc:
                    row["note"] = (row["note"] + "; " if row["note"] else "") + f"response not decoded ({exc})"

        asyncio.ensure_future(deliver())

    # ------------------------------------------------------------------ broker -> client

    def _on_response(self, conn: Conn, frame: memoryview, streamed: bool) -> Act | None:
        p = conn.pending.pop(_SIZE.unpack_from(frame, 4)[0], None)
        if p is None:
            return None
        row = p.row
        row["response_time"] = time.time()
        row["fate"] = "forwarded"
        if p.api_key in DECODED_RESPONSES:
            try:
                resp = decode_response(bytes(frame[4:]), p.api_key, p.version, schemas=self.schemas)
                if p.api_key == METADATA:
                    learn_topic_ids(resp, self.topic_names)
                row["response"] = summarize_response(resp, row["request"], self.topic_names)
            except (ProtocolError, KeyError, ValueError) as exc:
                row["note"] = (row["note"] + "; " if row["note"] else "") + f"response not decoded ({exc})"
        d = p.decision
        if not d:
            return None
        if d.drop_response:
            row["fate"] = "response dropped by proxy" + (", connection closed" if d.close else "")
        elif d.delay_s:
            row["fate"] = f"delayed {d.delay_s:g} s"  # this direction holds: later answers wait behind it
        return Act(forward=not d.drop_response, close=d.drop_response and d.close, delay_s=d.delay_s)
