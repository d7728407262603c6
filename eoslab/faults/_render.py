"""The trace as a lesson shows it: a Mermaid sequence diagram and a pandas DataFrame.

Pure functions of trace rows (dicts as the daemon records them), so they are
unit-tested on rows recorded from the real cluster (tests/data/faults/).

Blind spots, by design of where the proxy sits (on the client listener):
replication (Fetch between brokers on the INTERNAL listener), WriteTxnMarkers
(coordinator -> partition leaders) and AllocateProducerIds (broker -> active
controller) never pass it, so no trace shows them.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from typing import Any

from eoslab.faults._summary import EOS_API_NAMES

BLIND_SPOTS = (
    "replication (follower Fetch on the INTERNAL listener)",
    "WriteTxnMarkers (transaction coordinator -> partition leaders)",
    "AllocateProducerIds (broker -> active controller)",
)

_UNSAFE = re.compile(r"[;#<>{}\n]")


def _safe(text: str) -> str:
    """Mermaid message text: ``;`` ends a statement, ``#`` starts an entity code."""
    return _UNSAFE.sub(" ", text).strip()


def _produce_items(items: list[dict[str, Any]]) -> str:
    parts = []
    for i in items:
        s = f"{i.get('topic')}-{i.get('partition')}"
        if "producer_id" in i:
            s += f" pid={i['producer_id']} ep={i['producer_epoch']} seq={i['base_sequence']} n={i['record_count']}"
            s += " txn" if i.get("transactional") else ""
        if "base_offset" in i:
            s += f" offset={i['base_offset']}" if not i.get("error_code") else f" {i['error']}"
        parts.append(s)
    return ", ".join(parts)


_REQUEST_BITS: tuple[Callable[[str, dict[str, Any]], str | None], ...] = (
    lambda api, req: f"txn={req['transactional_id']}" if req.get("transactional_id") else None,
    lambda api, req: (
        f"pid={req['producer_id']} ep={req['producer_epoch']}" if req.get("producer_id") not in (None, -1) else None
    ),
    lambda api, req: (
        " ".join(f"{i['topic']}-{i['partition']}" for i in req.get("items", []))
        if api == "AddPartitionsToTxn"
        else None
    ),
    lambda api, req: f"group={req['group_id']}" if "group_id" in req else None,
    lambda api, req: ("COMMIT" if req["committed"] else "ABORT") if "committed" in req else None,
    lambda api, req: (
        f"{req.get('key_type')} {' '.join(map(str, req.get('keys', [])))}" if api == "FindCoordinator" else None
    ),
)
"""What a request's label shows after its API and version, in this order, each where the request has it."""


def request_label(row: dict[str, Any]) -> str:
    req, api = row.get("request") or {}, row["api"]
    head = f"{api} v{row['version']}" if row.get("version") is not None else api
    if api == "Produce" and req.get("items"):
        return f"{head} {_produce_items(req['items'])}"
    bits = [bit for show in _REQUEST_BITS if (bit := show(api, req)) is not None]
    return " ".join([head, *bits])


def _produced(api: str, resp: dict[str, Any]) -> str | None:
    return _produce_items(resp["items"]) if api == "Produce" and resp.get("items") else None


def _producer(api: str, resp: dict[str, Any]) -> str | None:
    if "producer_id" not in resp:
        return None
    error = f" {resp['error']}" if resp.get("error_code") else ""
    return f"pid={resp['producer_id']} ep={resp['producer_epoch']}{error}"


def _features(api: str, resp: dict[str, Any]) -> str | None:
    if api != "ApiVersions" or not resp.get("finalized_features"):
        return None
    return f"finalized transaction.version={resp['finalized_features'].get('transaction.version', 0)}"


def _coordinators(api: str, resp: dict[str, Any]) -> str | None:
    if api != "FindCoordinator" or not resp.get("items"):
        return None
    return " ".join(
        f"{i['key']} {i['error']}" if i.get("error_code") else f"{i['key']} at broker {i['node_id']}"
        for i in resp["items"]
    )


_RESPONSE_TEXTS = (_produced, _producer, _features, _coordinators)
"""The labels a response can have, first match wins; otherwise its error, or ok."""


def _response_text(api: str, resp: dict[str, Any]) -> str:
    if not resp:
        return "response"
    texts = (text for label in _RESPONSE_TEXTS if (text := label(api, resp)) is not None)
    text = next(texts, None)
    return text if text is not None else resp.get("error") or "ok"


def response_label(row: dict[str, Any]) -> str:
    return f"{row['api']} {_response_text(row['api'], row.get('response') or {})}"


def _participant(r: dict[str, Any], clients: dict[str, str]) -> str:
    """The row's sender's alias: C1, C2 ... by client.id in order of appearance; "Proxy" for its replays."""
    who = "Proxy" if r.get("via") == "proxy" else (r.get("client_id") or "(no client.id)")
    return clients.setdefault(who, "Proxy" if who == "Proxy" else f"C{len(clients) + 1}")


def _messages(r: dict[str, Any], alias: str) -> list[tuple[float, int, str]]:
    """A row's arrows, each at its own time: the request (ending in ``x`` if the proxy lost it), its answer if any."""
    b = f"B{r['broker']}"
    fate = r.get("fate", "")
    if fate.startswith("request dropped") or fate.startswith("connection cut"):
        return [(r["time"], r["id"], f"{alias}-x{b}: {_safe(request_label(r))} ({fate})")]
    out = [(r["time"], r["id"], f"{alias}->>{b}: {_safe(request_label(r))}")]
    if r.get("response_time") is not None:
        arrow = "--x" if fate.startswith("response dropped") else "-->>"
        extra = f" ({fate})" if fate not in ("forwarded", "answered to the control API") else ""
        out.append((r["response_time"], r["id"], f"{b}{arrow}{alias}: {_safe(response_label(r))}{extra}"))
    return out


def mermaid(rows: list[dict[str, Any]], *, all_apis: bool = False, max_events: int = 200) -> str:
    """A ``sequenceDiagram``: clients (by client.id) on the left, brokers on the right.

    Only EOS APIs unless ``all_apis``; a lost message ends in ``x``; replays come from "Proxy".
    """
    rows = [r for r in rows if all_apis or r["api"] in EOS_API_NAMES]
    clients: dict[str, str] = {}
    events = sorted(e for r in rows for e in _messages(r, _participant(r, clients)))
    lines = ["sequenceDiagram"]
    for name, alias in clients.items():
        lines.append(f"    participant {alias} as {_safe(name)}")
    lines += [f"    participant B{b} as Broker {b}" for b in sorted({r["broker"] for r in rows})]
    lines += [f"    {e[2]}" for e in events[:max_events]]
    if len(events) > max_events:
        first = next(iter(clients.values()))
        lines.append(f"    Note over {first}: {len(events) - max_events} more messages not shown")
    return "\n".join(lines)


_COLUMNS = [
    "id",
    "time",
    "client_id",
    "broker",
    "api",
    "version",
    "correlation_id",
    "via",
    "transactional_id",
    "topic",
    "partition",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "last_sequence",
    "record_count",
    "transactional",
    "base_offset",
    "error_code",
    "error",
    "fate",
    "latency_ms",
    "rules",
    "note",
]


def _flat_base(r: dict[str, Any]) -> dict[str, Any]:
    """A row's columns that do not depend on the batch: header, timing, producer, the response's first error."""
    req, resp = r.get("request") or {}, r.get("response") or {}
    base = {
        k: r.get(k) for k in ("id", "client_id", "broker", "api", "version", "correlation_id", "via", "fate", "note")
    }
    base["time"] = _dt.datetime.fromtimestamp(r["time"], tz=_dt.timezone.utc)
    base["rules"] = ",".join(map(str, r.get("rules") or []))
    rt = r.get("response_time")
    base["latency_ms"] = round((rt - r["time"]) * 1000, 3) if rt else None
    base["transactional_id"] = req.get("transactional_id")
    for k in ("producer_id", "producer_epoch"):
        base[k] = resp.get(k, req.get(k)) if r["api"] == "InitProducerId" else req.get(k)
    base["error_code"], base["error"] = resp.get("error_code"), resp.get("error")
    return base


def _flat_items(base: dict[str, Any], items: list[dict[str, Any]], resp: dict[str, Any]) -> list[dict[str, Any]]:
    """One line per request item, with the response item of the same (topic, partition) if there is one."""
    answers = {(i.get("topic"), i.get("partition")): i for i in resp.get("items") or []}
    out = []
    for item in items:
        line = {**base, **{k: v for k, v in item.items() if k in _COLUMNS}}
        ans = answers.get((item.get("topic"), item.get("partition")), {})
        if ans:
            line.update(base_offset=ans.get("base_offset"), error_code=ans.get("error_code"), error=ans.get("error"))
        out.append(line)
    return out


def flat_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per request, or per batch for Produce (request and response items paired by partition)."""
    out = []
    for r in rows:
        base = _flat_base(r)
        items = (r.get("request") or {}).get("items") or []
        out += _flat_items(base, items, r.get("response") or {}) if items else [base]
    return out


def frame(rows: list[dict[str, Any]]) -> Any:
    """The trace as a ``pandas.DataFrame`` (columns fixed, so an empty trace still has them)."""
    import pandas as pd

    return pd.DataFrame(flat_rows(rows), columns=_COLUMNS)
