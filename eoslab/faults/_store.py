"""The daemon's memory: trace rows (a bounded ring) and captured Produce frames for replay.

A row is one request and, once it comes, its response: a plain dict, so the
control API ships it as JSON and :class:`eoslab.faults.Trace` renders it.
Bounded, because a consumer's Fetch loop adds rows forever.
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from typing import Any

MAX_ROWS = 20_000
MAX_CAPTURE_BYTES = 32 * 1024 * 1024  # a replay needs the last few Produce frames, not a benchmark's worth
MAX_CAPTURES = 512
# A lesson replays a batch of a few records; a benchmark's megabyte batches are traced, not kept (copying
# each one cost the proxy a fifth of its time at 160 MB/s).
MAX_CAPTURE_FRAME = 256 * 1024


class TraceStore:
    def __init__(self, maxlen: int = MAX_ROWS) -> None:
        self.rows: deque[dict[str, Any]] = deque(maxlen=maxlen)
        self._ids = itertools.count(1)

    def add(
        self,
        *,
        conn: int,
        client_id: str | None,
        broker: int,
        api: str,
        version: int | None,
        correlation_id: int | None,
        via: str = "client",
        request: dict[str, Any] | None = None,
        fate: str = "pending",
        note: str = "",
        rules: list[int] | None = None,
    ) -> dict[str, Any]:
        row: dict[str, Any] = {
            "id": next(self._ids),
            "time": time.time(),
            "conn": conn,
            "client_id": client_id,
            "broker": broker,
            "api": api,
            "version": version,
            "correlation_id": correlation_id,
            "via": via,
            "request": request or {},
            "response_time": None,
            "response": None,
            "fate": fate,
            "rules": rules or [],
            "note": note,
        }
        self.rows.append(row)
        return row

    def query(self, client_id: str | None = None, since: int = 0, api: str | None = None) -> list[dict[str, Any]]:
        return [
            r
            for r in self.rows
            if r["id"] > since
            and (client_id is None or r["client_id"] == client_id)
            and (api is None or r["api"] == api)
        ]

    def clear(self, client_id: str | None = None) -> int:
        before = len(self.rows)
        if client_id is None:
            self.rows.clear()
        else:
            kept = [r for r in self.rows if r["client_id"] != client_id]
            self.rows.clear()
            self.rows.extend(kept)
        return before - len(self.rows)


@dataclass(frozen=True)
class Capture:
    """A Produce request exactly as the client sent it: size prefix and payload, kept apart because
    joining them would copy every Produce on the hot path; a replay joins them."""

    row_id: int
    broker: int
    client_id: str | None
    head: bytes
    payload: bytes
    items: tuple[dict[str, Any], ...]
    acks: int

    @property
    def frame(self) -> bytes:
        return self.head + self.payload


class CaptureStore:
    """The last Produce frames, newest last, bounded by count and bytes."""

    def __init__(self) -> None:
        self._caps: OrderedDict[int, Capture] = OrderedDict()
        self._bytes = 0

    def add(self, cap: Capture) -> None:
        self._caps[cap.row_id] = cap
        self._bytes += len(cap.payload)
        while self._caps and (len(self._caps) > MAX_CAPTURES or self._bytes > MAX_CAPTURE_BYTES):
            _, old = self._caps.popitem(last=False)
            self._bytes -= len(old.payload)

    def find(self, row_id: int | None = None, **want: Any) -> Capture | None:
        """By trace row id, else the newest capture with a batch whose fields equal ``want``."""
        if row_id is not None:
            return self._caps.get(row_id)
        client_id = want.pop("client_id", None)
        for cap in reversed(self._caps.values()):
            if client_id is not None and cap.client_id != client_id:
                continue
            if any(all(i.get(k) == v for k, v in want.items()) for i in cap.items):
                return cap
        return None

    def clear(self) -> None:
        self._caps.clear()
        self._bytes = 0
