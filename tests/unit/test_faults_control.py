"""The control API's routes, called as the daemon's HTTP handler calls them: no sockets, no cluster.

What each route answers over real HTTP against the running daemon is tested in
tests/integration/test_faults_*.py; here, which method and path reach which
part of the engine, and what a wrong one is told.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from eoslab.faults import FaultRuleError
from eoslab.faults import _control as control
from eoslab.faults._control import ROUTES, ControlServer
from eoslab.faults._proxy import ProxyEngine
from eoslab.topology import Topology


@pytest.fixture
def server() -> ControlServer:
    return ControlServer(ProxyEngine(Topology(port_offset=0)))


def call(server: ControlServer, method: str, path: str, query: dict[str, str] | None = None, **body: Any) -> Any:
    return asyncio.run(server._route(method, path, query or {}, body))


def test_the_route_table_is_the_documented_one() -> None:
    documented = {
        ("GET", "/health"),
        ("GET", "/rules"),
        ("POST", "/rules"),
        ("DELETE", "/rules"),
        ("GET", "/trace"),
        ("DELETE", "/trace"),
        ("POST", "/cut"),
        ("POST", "/replay"),
    }
    assert set(ROUTES) == documented
    for method, path in documented:
        assert f"\n{method:<9}{path}" in (control.__doc__ or ""), (method, path)


def test_health_counts_what_the_engine_holds(server: ControlServer) -> None:
    call(server, "POST", "/rules", action="cut", client_id="a")
    health = call(server, "GET", "/health")
    assert health == {
        "pid": os.getpid(),
        "port_offset": 0,
        "rules": 1,
        "rows": 0,
        "connections": 0,
        "in_compose": False,
    }


def test_rules_are_added_listed_read_and_removed_scoped_by_client_id(server: ControlServer) -> None:
    a = call(server, "POST", "/rules", action="cut", client_id="a")
    b = call(server, "POST", "/rules", action="drop_request", client_id="b", api="Produce")
    assert (a["id"], b["id"], b["action"], b["api"]) == (1, 2, "drop_request", "Produce")
    assert [r["id"] for r in call(server, "GET", "/rules")] == [1, 2]
    assert [r["id"] for r in call(server, "GET", "/rules", {"client_id": "b"})] == [2]
    assert call(server, "GET", "/rules/2") == b
    assert call(server, "DELETE", "/rules/2") == b
    assert call(server, "DELETE", "/rules", {"client_id": "b"}) == {"removed": 0}
    assert call(server, "DELETE", "/rules") == {"removed": 1}
    assert call(server, "GET", "/rules") == []


@pytest.mark.parametrize("method", ["GET", "DELETE", "POST"])
def test_a_rule_that_is_not_there_is_named(server: ControlServer, method: str) -> None:
    with pytest.raises(FaultRuleError, match=r"^There is no fault rule 7 \(it was healed or never added\)\.$"):
        call(server, method, "/rules/7")


def test_a_rule_id_that_is_not_a_number_is_a_bad_request(server: ControlServer) -> None:
    with pytest.raises(ValueError):  # _serve answers 400 "Bad control request: ValueError: ..."
        call(server, "GET", "/rules/seven")


def test_trace_and_cut_reach_the_engine(server: ControlServer) -> None:
    server.engine.trace.add(conn=1, client_id="a", broker=1, api="Produce", version=9, correlation_id=1)
    server.engine.trace.add(conn=2, client_id="b", broker=2, api="EndTxn", version=1, correlation_id=1)
    assert [r["client_id"] for r in call(server, "GET", "/trace")] == ["a", "b"]
    assert [r["api"] for r in call(server, "GET", "/trace", {"api": "EndTxn"})] == ["EndTxn"]
    assert [r["id"] for r in call(server, "GET", "/trace", {"since": "1"})] == [2]
    assert call(server, "DELETE", "/trace", {"client_id": "a"}) == {"removed": 1}
    assert call(server, "POST", "/cut", client_id="b") == {"cut": 0}  # no live connection


def test_a_replay_with_nothing_captured_says_to_send_one_first(server: ControlServer) -> None:
    with pytest.raises(FaultRuleError, match="No captured Produce request matches .* send one through the proxy first"):
        call(server, "POST", "/replay", row_id=3)


@pytest.mark.parametrize(("method", "path"), [("POST", "/health"), ("PUT", "/rules"), ("GET", "/cut"), ("GET", "")])
def test_a_route_that_is_not_there_is_named(server: ControlServer, method: str, path: str) -> None:
    with pytest.raises(FaultRuleError, match=f"^The control API has no {method} {path}\\.$"):
        call(server, method, path)
