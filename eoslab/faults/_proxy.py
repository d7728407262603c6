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
from typing import Any

from eoslab.faults._conn import HEADER, Conn, Pending, RequestHead, peek_client_id
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
from eoslab.topology import Node, Topology, bind_host

log = logging.getLogger("eoslab.faults.proxy")

CONNECT_TIMEOUT = 5.0  # loopback: a live broker accepts in microseconds; 5 s only covers a paused one
_SIZE = struct.Struct(">i")
_DROP = Act(forward=False)
_DROP_CLOSE = Act(forward=False, close=True)


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
                functools.partial(self._accept, b), bind_host(), b.proxy_front_port, reuse_address=True
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
        (host, port), upstream = conn.broker.proxied_address(), conn.upstream
        assert upstream is not None
        try:
            await asyncio.wait_for(loop.create_connection(lambda: upstream, host, port), CONNECT_TIMEOUT)
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
                note=f"{conn.broker.name} unreachable at {host}:{port} ({type(exc).__name__}: {exc})",
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
        head = self._read_head(conn, frame)
        if head is None:
            return None
        summary, note, kept = self._summarize(head, frame)
        decision = (
            self.rules.decide(facts_from(head.api, head.client_id, conn.broker.node_id, summary))
            if len(self.rules) and not streamed
            else Decision()
        )
        row = self._record(conn, head, summary, note, decision, frame, kept)
        return self._apply(conn, head, row, decision, frame)

    def _read_head(self, conn: Conn, frame: memoryview) -> RequestHead | None:
        """The request header, or None once a frame too short for one or of an unknown api is traced."""
        broker = conn.broker.node_id
        try:
            api_key, version, corr, _ = HEADER.unpack_from(frame, 4)
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
        return RequestHead(api_key, version, corr, client_id, name)

    def _summarize(self, head: RequestHead, frame: memoryview) -> tuple[dict[str, Any], str, bytes | None]:
        """The summary of an EOS request, a note if it did not decode, and its bytes if kept for a replay.

        Only a small Produce is copied (a replay resends it); every other frame is read in place.
        """
        if head.api_key not in EOS_API_KEYS:
            return {}, "", None
        kept = bytes(frame[4:]) if head.api_key == PRODUCE and len(frame) - 4 <= MAX_CAPTURE_FRAME else None
        try:
            request = decode_request(frame[4:] if kept is None else kept, schemas=self.schemas)
            return summarize_request(request, self.topic_names), "", kept
        except (ProtocolError, KeyError, ValueError) as exc:
            return {}, f"request not decoded ({exc}); forwarded untouched", kept

    def _record(
        self,
        conn: Conn,
        head: RequestHead,
        summary: dict[str, Any],
        note: str,
        decision: Decision,
        frame: memoryview,
        kept: bytes | None,
    ) -> dict[str, Any]:
        """The request's trace row; a kept Produce with batches becomes a capture a replay can resend."""
        broker = conn.broker.node_id
        row = self.trace.add(
            conn=conn.id,
            client_id=head.client_id,
            broker=broker,
            api=head.api,
            version=head.version,
            correlation_id=head.corr,
            request=summary,
            note=note,
            rules=decision.rule_ids,
        )
        if kept is not None and summary.get("items"):
            self.captures.add(
                Capture(
                    row["id"],
                    broker,
                    head.client_id,
                    bytes(frame[:4]),
                    kept,
                    tuple(summary["items"]),
                    summary.get("acks", -1),
                )
            )
        return row

    def _apply(
        self, conn: Conn, head: RequestHead, row: dict[str, Any], decision: Decision, frame: memoryview
    ) -> Act | None:
        """Cut, drop, hold or forward the request as decided; await its answer unless none will come."""
        if decision.cut:
            row["fate"] = "connection cut by proxy"
            return _DROP_CLOSE
        if decision.drop_request:
            row["fate"] = "request dropped by proxy"
            return _DROP_CLOSE if decision.close else _DROP
        if head.api_key == PRODUCE and row["request"].get("acks") == 0:
            row["fate"] = "no response (acks=0)"
        else:
            conn.pending[head.corr] = Pending(head.api_key, head.version, row, decision)
        if decision.delay_request_s:
            # A late request: off the client's connection now (the client waits in vain, as for a request
            # stuck in the network), onto the broker delay_s later on the proxy's own connection.
            conn.pending.pop(head.corr, None)
            row["fate"] = f"held {decision.delay_request_s:g} s by proxy"
            row["held_s"] = decision.delay_request_s
            asyncio.get_running_loop().call_later(
                decision.delay_request_s, self._deliver_late, conn.broker, row, head.api_key, head.version, bytes(frame)
            )
            return _DROP
        return None

    def _deliver_late(self, broker: Node, row: dict[str, Any], api_key: int, version: int, frame: bytes) -> None:
        """Send a held request on the proxy's own connection; its answer goes to the trace, never to the client."""

        async def deliver() -> None:
            held = row["held_s"]
            try:
                data = await exchange(
                    broker.proxied_address(), frame, expect_response=row["fate"] != "no response (acks=0)"
                )
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

    def _summarize_response(self, row: dict[str, Any], api_key: int, version: int, frame: memoryview) -> None:
        """The response's summary in its trace row (a Metadata response also teaches topic ids); a note
        in the row when it does not decode."""
        try:
            resp = decode_response(bytes(frame[4:]), api_key, version, schemas=self.schemas)
            if api_key == METADATA:
                learn_topic_ids(resp, self.topic_names)
            row["response"] = summarize_response(resp, row["request"], self.topic_names)
        except (ProtocolError, KeyError, ValueError) as exc:
            row["note"] = (row["note"] + "; " if row["note"] else "") + f"response not decoded ({exc})"

    def _on_response(self, conn: Conn, frame: memoryview, streamed: bool) -> Act | None:
        p = conn.pending.pop(_SIZE.unpack_from(frame, 4)[0], None)
        if p is None:
            return None
        row = p.row
        row["response_time"] = time.time()
        row["fate"] = "forwarded"
        if p.api_key in DECODED_RESPONSES:
            self._summarize_response(row, p.api_key, p.version, frame)
        d = p.decision
        if not d:
            return None
        if d.drop_response:
            row["fate"] = "response dropped by proxy" + (", connection closed" if d.close else "")
        elif d.delay_s:
            row["fate"] = f"delayed {d.delay_s:g} s"  # this direction holds: later answers wait behind it
        return Act(forward=not d.drop_response, close=d.drop_response and d.close, delay_s=d.delay_s)
