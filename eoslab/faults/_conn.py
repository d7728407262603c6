"""A proxied connection: its two sockets, the requests awaiting answers, and what a request header says.

Plain data the engine (:mod:`eoslab.faults._proxy`) decides over; the bytes move
in :mod:`eoslab.faults._pump`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eoslab.faults._pump import Half
from eoslab.faults._rules import Decision
from eoslab.topology import Node

HEADER = struct.Struct(">hhih")  # api key, api version, correlation id, client id length


@dataclass(frozen=True)
class RequestHead:
    """What the proxy reads of every request header before deciding anything."""

    api_key: int
    version: int
    corr: int
    client_id: str | None
    api: str  # the api's name in the pinned schemas


@dataclass
class Pending:
    """A request awaiting its answer: what a decode of the answer needs, its trace row, what the rules said."""

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
    pending: dict[int, Pending] = field(default_factory=dict)
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
    n = HEADER.unpack_from(payload, 0)[3]
    if n < 0:
        return None
    return bytes(payload[10 : 10 + n]).decode("utf-8", "replace")
