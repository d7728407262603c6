"""Rules: which request a fault hits, and what the proxy then does. Pure logic, no sockets.

A rule matches a REQUEST (the proxy only ever decides when a request passes);
its action then applies to that request or to the response that answers it:

- ``drop_response``: the request reaches the broker, which writes it, and the
  answer is lost on the way back (the "ack lost" of the idempotence lesson);
  ``close=True`` also closes the client's connection, so librdkafka retries at
  once instead of after ``socket.timeout.ms``.
- ``delay_response``: the answer is held ``delay_s`` seconds; later answers on
  the same connection wait behind it (Kafka answers in order per connection).
- ``drop_request``: the broker never sees the request.
- ``delay_request``: a LATE request. It is taken off the client's connection (the
  client waits in vain, as for a request stuck in the network; later requests
  pass) and reaches the broker ``delay_s`` seconds later on the proxy's own
  connection, whether or not the client gave up meanwhile; the broker's answer
  goes to the trace, never to the client.
- ``cut``: both sockets are closed when the request arrives (not forwarded).

Counting: every matching request is a hit; the rule fires from the ``nth``
hit on, at most ``times`` times (``None``: without end).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

Action = Literal["drop_response", "delay_response", "drop_request", "delay_request", "cut"]
ACTIONS: tuple[str, ...] = ("drop_response", "delay_response", "drop_request", "delay_request", "cut")
ITEM_KEYS = ("topic", "partition", "producer_id", "producer_epoch", "base_sequence")


@dataclass
class RuleSpec:
    """A fault rule as data (what the control API stores and ships as JSON)."""

    action: Action
    api: str | None = None  # Kafka api name, e.g. "Produce"
    client_id: str | None = None
    broker: int | None = None  # node id of the broker behind the proxy front
    topic: str | None = None
    partition: int | None = None
    producer_id: int | None = None
    producer_epoch: int | None = None
    base_sequence: int | None = None
    nth: int = 1
    times: int | None = 1
    delay_s: float = 0.0
    close: bool = False
    id: int = 0
    hits: int = field(default=0, compare=False)
    fired: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        from eoslab.faults._errors import FaultRuleError

        if self.action not in ACTIONS:
            raise FaultRuleError(f"Unknown fault action {self.action!r}: use one of {', '.join(ACTIONS)}.")
        if self.nth < 1:
            raise FaultRuleError(f"nth={self.nth} must be 1 or more (1 = the first matching request).")
        if self.times is not None and self.times < 1:
            raise FaultRuleError(f"times={self.times} must be 1 or more, or None for every match.")
        if self.action in ("delay_response", "delay_request") and self.delay_s <= 0:
            raise FaultRuleError(f"A {self.action} rule needs delay_s > 0 (seconds).")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RuleSpec:
        from eoslab.faults._errors import FaultRuleError

        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise FaultRuleError(f"Unknown rule field(s) {', '.join(unknown)}: use {', '.join(sorted(known))}.")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= self.times

    def describe(self) -> str:
        where = [f"{k}={v}" for k in ("api", "client_id", "broker", *ITEM_KEYS) if (v := getattr(self, k)) is not None]
        when = f"hit {self.nth}" + ("" if self.times == 1 else f", {self.times or 'every'} time(s)")
        return f"{self.action} where {' '.join(where) or 'any request'} ({when})"


@dataclass
class RequestFacts:
    """What a rule can match on, from the request header and (for EOS APIs) its summary."""

    api: str
    client_id: str | None
    broker: int
    items: list[dict[str, Any]] = field(default_factory=list)  # per batch/partition, keys ITEM_KEYS


def facts_from(api: str, client_id: str | None, broker: int, summary: dict[str, Any]) -> RequestFacts:
    top = {k: summary[k] for k in ITEM_KEYS if summary.get(k) is not None}
    items = [{**top, **i} for i in summary.get("items") or []] or ([top] if top else [])
    return RequestFacts(api, client_id, broker, items)


_HEADER_KEYS = ("api", "client_id", "broker")


def _wanted(rule: RuleSpec, keys: tuple[str, ...]) -> dict[str, Any]:
    """The rule's conditions among ``keys``: each field it sets (None matches anything)."""
    return {k: v for k in keys if (v := getattr(rule, k)) is not None}


def matches(rule: RuleSpec, facts: RequestFacts) -> bool:
    """Header fields must all equal; item fields must all equal within ONE batch/partition of the request."""
    if any(getattr(facts, k) != v for k, v in _wanted(rule, _HEADER_KEYS).items()):
        return False
    wanted = _wanted(rule, ITEM_KEYS)
    if not wanted:
        return True
    return any(all(item.get(k) == v for k, v in wanted.items()) for item in facts.items)


@dataclass
class Decision:
    """The combined verdict of every rule that fired on one request."""

    rule_ids: list[int] = field(default_factory=list)
    cut: bool = False
    drop_request: bool = False
    drop_response: bool = False
    close: bool = False
    delay_s: float = 0.0
    delay_request_s: float = 0.0

    def __bool__(self) -> bool:
        return bool(self.rule_ids)


class RuleBook:
    """The live rules of the daemon, in the order they were added."""

    def __init__(self) -> None:
        self._rules: dict[int, RuleSpec] = {}
        self._next = 1

    def add(self, rule: RuleSpec) -> RuleSpec:
        rule.id, self._next = self._next, self._next + 1
        rule.hits = rule.fired = 0
        self._rules[rule.id] = rule
        return rule

    def get(self, rule_id: int) -> RuleSpec | None:
        return self._rules.get(rule_id)

    def remove(self, rule_id: int) -> RuleSpec | None:
        return self._rules.pop(rule_id, None)

    def clear(self, client_id: str | None = None) -> int:
        doomed = [i for i, r in self._rules.items() if client_id is None or r.client_id == client_id]
        for i in doomed:
            del self._rules[i]
        return len(doomed)

    def all(self, client_id: str | None = None) -> list[RuleSpec]:
        return [r for r in self._rules.values() if client_id is None or r.client_id == client_id]

    def __len__(self) -> int:
        return len(self._rules)

    def decide(self, facts: RequestFacts) -> Decision:
        """Count hits, fire the rules whose turn it is, and combine their actions."""
        d = Decision()
        for rule in self._rules.values():
            if rule.exhausted or not matches(rule, facts):
                continue
            rule.hits += 1
            if rule.hits < rule.nth:
                continue
            rule.fired += 1
            d.rule_ids.append(rule.id)
            if rule.action == "cut":
                d.cut = True
            elif rule.action == "drop_request":
                d.drop_request = True
                d.close |= rule.close
            elif rule.action == "drop_response":
                d.drop_response = True
                d.close |= rule.close
            elif rule.action == "delay_request":
                d.delay_request_s = max(d.delay_request_s, rule.delay_s)
            else:
                d.delay_s = max(d.delay_s, rule.delay_s)
        return d
