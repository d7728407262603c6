"""The one HTTP client of the proxy daemon's control API (:mod:`eoslab.faults._control` serves it).

A daemon error comes back as JSON ``{"error": sentence, "type": class name}`` and is raised
here as that :class:`FaultError`; nothing listening means :class:`ProxyNotRunning`.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Protocol

from eoslab._ports import LOOPBACK
from eoslab.faults._errors import FaultError, FaultRuleError, ProxyNotRunning
from eoslab.topology import TOPOLOGY, Topology

CALL_TIMEOUT = 15.0
"""A control call: milliseconds, except a replay, which waits for an acks=all write (``_exchange.TIMEOUT``, 10 s)."""
HEALTH_TIMEOUT = 1.0
"""/health answers from the daemon's event loop at once; a second without an answer means no daemon."""

_ERRORS: dict[str, type[FaultError]] = {"FaultRuleError": FaultRuleError, "FaultError": FaultError}


class HasTopology(Protocol):
    """Anything that knows the cluster's topology: a :class:`eoslab.Cluster` does."""

    @property
    def topology(self) -> Topology: ...


def topology_of(target: Topology | HasTopology | None) -> Topology:
    """The topology of ``target`` (a cluster or a topology); this process's when None."""
    if target is None:
        return TOPOLOGY
    return target if isinstance(target, Topology) else target.topology


class ControlClient:
    """Calls on the daemon of one topology (its control port): JSON in, JSON out."""

    def __init__(self, topology: Topology = TOPOLOGY, timeout: float = CALL_TIMEOUT) -> None:
        self.topology = topology
        self.timeout = timeout
        self.url = f"http://{LOOPBACK}:{topology.proxy_control_port}"

    def call(self, method: str, path: str, body: dict[str, Any] | None = None, **query: Any) -> Any:
        q = urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"{self.url}{path}{'?' + q if q else ''}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # loopback only
                return json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            try:
                err = json.loads(exc.read())
            except ValueError:
                err = {"error": f"The fault proxy answered HTTP {exc.code}.", "type": "FaultError"}
            raise _ERRORS.get(err.get("type", ""), FaultError)(err["error"]) from None
        except TimeoutError:
            raise FaultError(
                f"The fault proxy did not answer {method} {path} within {self.timeout:g} s: "
                "see its log under the data folder (proxy/proxy.log)."
            ) from None
        except OSError as exc:  # URLError, a refused or reset connection, a timeout
            raise ProxyNotRunning(
                f"The fault proxy is not running on {LOOPBACK}:{self.topology.proxy_control_port} "
                f"({getattr(exc, 'reason', exc)}): run `eoslab up`, or eoslab.faults.ensure_proxy(cluster)."
            ) from None


def health(topology: Topology = TOPOLOGY, timeout: float = HEALTH_TIMEOUT) -> dict[str, Any] | None:
    """The daemon's /health answer, or None when nothing answers on the control port."""
    try:
        found: dict[str, Any] = ControlClient(topology, timeout).call("GET", "/health")
    except (FaultError, ValueError):
        return None
    return found
