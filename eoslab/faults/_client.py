"""The Python face of the proxy daemon: rules as fault objects, the trace, replays, raw requests.

>>> proxy = Proxy.connect(cluster)                       # starts the daemon if needed
>>> with proxy.drop_response(api="Produce", client_id="demo-1", close=True):
...     producer.produce(...); producer.flush()          # the ack is lost, the retry is deduplicated
>>> eoslab.show_mermaid(proxy.trace(client_id="demo-1").mermaid())
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from eoslab._ports import LOOPBACK
from eoslab.faults._control_client import CALL_TIMEOUT, ControlClient, HasTopology, topology_of
from eoslab.faults._errors import FaultRuleError
from eoslab.faults._lifecycle import ensure_proxy
from eoslab.faults._render import BLIND_SPOTS, flat_rows, frame, mermaid
from eoslab.faults._rules import RuleSpec
from eoslab.faults._timeline import plot_timeline
from eoslab.protocol import KafkaConnection, KafkaConnectionError
from eoslab.topology import TOPOLOGY, Topology


class Trace(list):  # type: ignore[type-arg]
    """Trace rows (dicts, oldest first) that render themselves."""

    blind_spots = BLIND_SPOTS

    def mermaid(self, *, all_apis: bool = False, max_events: int = 200) -> str:
        return mermaid(list(self), all_apis=all_apis, max_events=max_events)

    def frame(self) -> Any:
        return frame(list(self))

    def plot(self, *, ax: Any = None, all_apis: bool = False) -> Any:
        """A matplotlib timeline: each request as a bar until its answer (the gaps are timeouts)."""
        return plot_timeline(list(self), ax=ax, all_apis=all_apis)

    def flat(self) -> list[dict[str, Any]]:
        return flat_rows(list(self))

    def where(self, **want: Any) -> Trace:
        """Rows whose top-level fields equal ``want`` (e.g. ``api="Produce"``, ``via="client"``)."""
        return Trace(r for r in self if all(r.get(k) == v for k, v in want.items()))


class Proxy:
    """A client of the daemon's control API (the daemon owns all state; this object owns none)."""

    def __init__(self, topology: Topology = TOPOLOGY, timeout: float = CALL_TIMEOUT) -> None:
        self.topology = topology
        self.timeout = timeout
        self._control = ControlClient(topology, timeout)
        self.url = self._control.url

    @classmethod
    def connect(cls, target: Topology | HasTopology | None = None) -> Proxy:
        """The running proxy of ``target``'s topology (a cluster's, or a topology), started if it is not running."""
        topology = topology_of(target)
        ensure_proxy(topology)
        return cls(topology)

    def bootstrap_servers(self) -> str:
        return self.topology.bootstrap_servers(proxied=True)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None, **query: Any) -> Any:
        return self._control.call(method, path, body, **query)

    # -- state ---------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/health")
        return result

    def rules(self, client_id: str | None = None) -> list[RuleSpec]:
        return [RuleSpec.from_dict(r) for r in self._call("GET", "/rules", client_id=client_id)]

    def rule(self, rule_id: int) -> RuleSpec:
        return RuleSpec.from_dict(self._call("GET", f"/rules/{rule_id}"))

    def add_rule(self, spec: RuleSpec) -> RuleSpec:
        data = spec.to_dict()
        for k in ("id", "hits", "fired"):
            data.pop(k)
        return RuleSpec.from_dict(self._call("POST", "/rules", data))

    def remove_rule(self, rule_id: int) -> None:
        self._call("DELETE", f"/rules/{rule_id}")

    def clear_rules(self, client_id: str | None = None) -> int:
        """Heal every fault (of one client.id): the proxy forwards everything again."""
        return int(self._call("DELETE", "/rules", client_id=client_id)["removed"])

    def trace(self, client_id: str | None = None, since: int = 0, api: str | None = None) -> Trace:
        return Trace(self._call("GET", "/trace", client_id=client_id, since=since, api=api))

    def clear_trace(self, client_id: str | None = None) -> int:
        return int(self._call("DELETE", "/trace", client_id=client_id)["removed"])

    # -- faults ----------------------------------------------------------------
    def fault(self, action: str, **match: Any) -> Fault:
        return Fault(self, RuleSpec(action=action, **match))  # type: ignore[arg-type]

    def drop_response(self, *, close: bool = False, **match: Any) -> Fault:
        """The broker gets (and writes) the request; its answer is lost; ``close`` also drops the connection."""
        return self.fault("drop_response", close=close, **match)

    def delay_response(self, delay_s: float, **match: Any) -> Fault:
        return self.fault("delay_response", delay_s=delay_s, **match)

    def delay_request(self, delay_s: float, **match: Any) -> Fault:
        """Late requests: each match reaches the broker ``delay_s`` s later, on the proxy's own connection;
        the client never gets its answer (the trace does)."""
        return self.fault("delay_request", delay_s=delay_s, **match)

    def drop_request(self, *, close: bool = False, **match: Any) -> Fault:
        return self.fault("drop_request", close=close, **match)

    def cut_on(self, **match: Any) -> Fault:
        """Close the connection when a matching request arrives (the request is not forwarded)."""
        return self.fault("cut", **match)

    def cut(self, client_id: str | None = None, broker: int | None = None) -> int:
        """Close the live connections (of a client.id, to a broker) now; the number closed."""
        return int(self._call("POST", "/cut", {"client_id": client_id, "broker": broker})["cut"])

    def replay(self, row_id: int | None = None, *, broker: int | None = None, **batch: Any) -> dict[str, Any]:
        """Resend a captured Produce (by trace row id, or the newest whose batch matches ``batch``,
        e.g. ``client_id=..., base_sequence=0``) to the current leader; the broker's answer, as a trace row."""
        body: dict[str, Any] = dict(batch)
        if row_id is not None:
            body["row_id"] = row_id
        if broker is not None:
            body["broker"] = broker
        result: dict[str, Any] = self._call("POST", "/replay", body)
        return result

    def request(
        self,
        broker: int,
        api: int | str,
        body: dict[str, Any] | None = None,
        *,
        version: int | None = None,
        client_id: str = "eoslab-raw",
    ) -> dict[str, Any]:
        """One raw request to a CHOSEN broker, through its proxy front (so the trace records it).

        Why: librdkafka sends a non-transactional InitProducerId to a random broker; a lesson
        that must say "broker 2 granted this id" sends its own.
        """
        port = self.topology.broker(broker).proxy_front_port
        started = time.time()  # the daemon stamps its rows with the same (shared) wall clock
        try:
            with KafkaConnection(LOOPBACK, port, client_id=client_id) as conn:
                return conn.request(api, version, body)
        except KafkaConnectionError as exc:
            # The proxy closes a client whose broker it cannot reach: say so, from its own trace.
            dials = [
                r
                for r in self.trace(api="(connect)")
                if r.get("broker") == broker and r["time"] >= started and "unreachable" in r["note"]
            ]
            if dials:
                raise KafkaConnectionError(f"{exc} The proxy says: {dials[-1]['note']}.") from exc
            raise


@dataclass
class Fault:
    """One rule as a fault object: ``inject()`` adds it, ``heal()`` removes it; a context manager."""

    proxy: Proxy
    spec: RuleSpec
    rule_id: int | None = None

    def inject(self) -> Fault:
        if self.rule_id is None:
            self.rule_id = self.proxy.add_rule(self.spec).id
        return self

    def heal(self) -> None:
        rule_id, self.rule_id = self.rule_id, None
        if rule_id is not None:
            try:
                self.proxy.remove_rule(rule_id)
            except FaultRuleError:
                pass  # already healed (a heal-all ran)

    def state(self) -> RuleSpec:
        """The rule as the daemon sees it now (``hits``, ``fired``)."""
        if self.rule_id is None:
            raise FaultRuleError(f"This fault is not injected: {self.spec.describe()}.")
        return self.proxy.rule(self.rule_id)

    @property
    def fired(self) -> int:
        """How many requests the rule fired on. It counts when the REQUEST passes the proxy: a rule on the
        answer (drop_response, delay_response) has not acted yet then; :meth:`applied` says when it has."""
        return self.state().fired

    def hits(self) -> list[dict[str, Any]]:
        """The trace rows of the requests this rule fired on, oldest first."""
        if self.rule_id is None:
            raise FaultRuleError(f"This fault is not injected: {self.spec.describe()}.")
        rows = self.proxy.trace(client_id=self.spec.client_id, api=self.spec.api)
        return [r for r in rows if self.rule_id in (r.get("rules") or ())]

    def applied(self) -> dict[str, Any] | None:
        """The first row the rule has ACTED on (the request dropped or held, the answer dropped or held:
        its fate is no longer ``pending``), or None while it has not."""
        return next((r for r in self.hits() if r["fate"] != "pending"), None)

    def __enter__(self) -> Fault:
        return self.inject()

    def __exit__(self, *exc: object) -> None:
        self.heal()

    def __repr__(self) -> str:
        return f"Fault({self.spec.describe()}, {'injected #' + str(self.rule_id) if self.rule_id else 'healed'})"
