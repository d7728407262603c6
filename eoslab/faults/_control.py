"""The control API: HTTP + JSON on 127.0.0.1, served on the proxy's own event loop.

Why HTTP on the same loop: rules and the trace live in the engine's memory,
and one loop means no locks; stdlib only (asyncio streams), tiny requests.

=======  =====================  ===================================================
GET      /health                pid, port offset, rule and row counts
GET      /rules[?client_id=]    the rules with their hit/fired counters
POST     /rules                 a rule (see RuleSpec) -> the stored rule with its id
DELETE   /rules[/<id>]          one rule, all, or ``?client_id=`` scoped
GET      /trace[?client_id=&since=&api=]   trace rows
DELETE   /trace[?client_id=]    forget rows
POST     /cut                   ``{client_id?, broker?}``: close live connections now
POST     /replay                ``{row_id?}`` or batch fields, ``broker?`` -> the new row
=======  =====================  ===================================================
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

from eoslab.faults._errors import FaultError, FaultRuleError
from eoslab.faults._proxy import ProxyEngine
from eoslab.faults._replay import replay
from eoslab.faults._rules import RuleSpec
from eoslab.faults._store import MAX_CAPTURE_FRAME
from eoslab.topology import bind_host, in_compose

MAX_BODY = 1 << 20


def _jsonable(value: Any) -> Any:
    return str(value)  # UUIDs and anything else exotic in a summary


class ControlServer:
    def __init__(self, engine: ProxyEngine) -> None:
        self.engine = engine
        self.server: asyncio.Server | None = None

    async def start(self) -> None:
        port = self.engine.topology.proxy_control_port
        self.server = await asyncio.start_server(self._serve, bind_host(), port, reuse_address=True)

    async def _serve(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            line = (await r.readline()).decode("latin-1").split()
            headers: dict[str, str] = {}
            while (h := await r.readline()) not in (b"\r\n", b"\n", b""):
                k, _, v = h.decode("latin-1").partition(":")
                headers[k.strip().lower()] = v.strip()
            n = min(int(headers.get("content-length", "0") or 0), MAX_BODY)
            body = json.loads(await r.readexactly(n)) if n else {}
            method, target = line[0], line[1]
            url = urllib.parse.urlsplit(target)
            query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
            status, answer = 200, await self._route(method, url.path.rstrip("/"), query, body)
        except FaultError as exc:
            status, answer = 400, {"error": str(exc), "type": type(exc).__name__}
        except (ValueError, IndexError, TypeError, KeyError) as exc:
            status, answer = (
                400,
                {"error": f"Bad control request: {type(exc).__name__}: {exc}.", "type": "FaultRuleError"},
            )
        except Exception as exc:  # noqa: BLE001 - the daemon outlives any bad request
            status, answer = 500, {"error": f"The proxy failed: {type(exc).__name__}: {exc}.", "type": "FaultError"}
        data = json.dumps(answer, default=_jsonable).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}.get(status, "")
        try:
            w.write(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}"
                f"\r\nConnection: close\r\n\r\n".encode()
                + data
            )
            await w.drain()
        except ConnectionError:
            pass
        finally:
            w.close()

    async def _route(self, method: str, path: str, q: dict[str, str], body: dict[str, Any]) -> Any:
        if path.startswith("/rules/"):
            return _one_rule(self.engine, method, int(path.rsplit("/", 1)[1]))
        handler = ROUTES.get((method, path))
        if handler is None:
            raise FaultRuleError(f"The control API has no {method} {path}.")
        return await handler(self.engine, q, body)


Handler = Callable[[ProxyEngine, dict[str, str], dict[str, Any]], Awaitable[Any]]


async def _health(e: ProxyEngine, q: dict[str, str], body: dict[str, Any]) -> Any:
    return {
        "pid": os.getpid(),
        "port_offset": e.topology.port_offset,
        "rules": len(e.rules),
        "rows": len(e.trace.rows),
        "connections": len(e.conns),
        "in_compose": in_compose(),  # the lab container's proxy (its pid is of that container)
    }


async def _list_rules(e: ProxyEngine, q: dict[str, str], body: dict[str, Any]) -> Any:
    return [r.to_dict() for r in e.rules.all(q.get("client_id"))]


async def _add_rule(e: ProxyEngine, q: dict[str, str], body: dict[str, Any]) -> Any:
    return e.rules.add(RuleSpec.from_dict(body)).to_dict()


async def _clear_rules(e: ProxyEngine, q: dict[str, str], body: dict[str, Any]) -> Any:
    return {"removed": e.rules.clear(q.get("client_id"))}


def _one_rule(e: ProxyEngine, method: str, rule_id: int) -> Any:
    """``GET`` or ``DELETE /rules/<id>``: any other method finds no rule either."""
    rule = e.rules.get(rule_id) if method == "GET" else e.rules.remove(rule_id) if method == "DELETE" else None
    if rule is None:
        raise FaultRuleError(f"There is no fault rule {rule_id} (it was healed or never added).")
    return rule.to_dict()


async def _trace(e: ProxyEngine, q: dict[str, str], body: dict[str, Any]) -> Any:
    return e.trace.query(q.get("client_id"), int(q.get("since", 0)), q.get("api"))


async def _clear_trace(e: ProxyEngine, q: dict[str, str], body: dict[str, Any]) -> Any:
    return {"removed": e.trace.clear(q.get("client_id"))}


async def _cut(e: ProxyEngine, q: dict[str, str], body: dict[str, Any]) -> Any:
    return {"cut": e.cut(body.get("client_id"), body.get("broker"))}


async def _replay(e: ProxyEngine, q: dict[str, str], body: dict[str, Any]) -> Any:
    want = dict(body)
    broker = want.pop("broker", None)
    cap = e.captures.find(**want)
    if cap is None:
        raise FaultRuleError(
            f"No captured Produce request matches {body}: the proxy keeps the last "
            f"Produce requests that passed it (up to {MAX_CAPTURE_FRAME // 1024} KiB "
            f"each); send one through the proxy first."
        )
    return await replay(e, cap, broker)


# The table in this module's docstring, as code; ``/rules/<id>`` is matched by prefix in ``_route``.
ROUTES: dict[tuple[str, str], Handler] = {
    ("GET", "/health"): _health,
    ("GET", "/rules"): _list_rules,
    ("POST", "/rules"): _add_rule,
    ("DELETE", "/rules"): _clear_rules,
    ("GET", "/trace"): _trace,
    ("DELETE", "/trace"): _clear_trace,
    ("POST", "/cut"): _cut,
    ("POST", "/replay"): _replay,
}
