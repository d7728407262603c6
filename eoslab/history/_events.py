"""What a processor records, one event per thing it did: polled, sent, committed, aborted, assigned, failed.

An event is what the process *saw*, when it saw it, never what it meant to do: ``Sent`` is written
from the delivery report (so it carries the offset the leader gave the record, or the error), and
``Committed`` only once ``commit_transaction`` has returned. A process killed between the two
leaves a transaction without an outcome; the checker treats it as Jepsen treats an ``:info``
operation: it may or may not have happened.

Values are text (the course's records are UTF-8); bytes that are not UTF-8 are kept with
``surrogateescape`` so that nothing is lost on the way to JSON and back.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, TypeAlias

from eoslab.errors import DataError


class HistoryFormatError(DataError):
    """A history or final-read file that is not what the recorder writes."""


def text(raw: bytes | str | None) -> str | None:
    """A record's key or value as the history keeps it: text, with undecodable bytes escaped."""
    if raw is None or isinstance(raw, str):
        return raw
    return raw.decode("utf-8", "surrogateescape")


@dataclass(frozen=True, order=True)
class Position:
    """A place in a log: the record at ``offset`` of ``topic`` partition ``partition``. In a
    ``Committed`` event it is, as in Kafka's OffsetCommit, the NEXT offset to consume."""

    topic: str
    partition: int
    offset: int

    def __str__(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset}"


@dataclass(frozen=True)
class Assigned:
    """The consumer was given these partitions (a rebalance or an ``assign``): where it polls next
    is the group's committed offset, so polls of these partitions start afresh. ``offsets``, when the
    processor fetched them (``Consumer.committed``), are those committed offsets: an abort may rewind
    to them and no further."""

    process: str
    time: float
    partitions: tuple[tuple[str, int], ...]
    offsets: tuple[Position, ...] = ()
    kind: str = field(default="assigned", init=False)


@dataclass(frozen=True)
class Polled:
    """One record a poll returned (the processor's consumer reads with ``read_committed``)."""

    process: str
    time: float
    at: Position
    value: str | None
    key: str | None = None
    kind: str = field(default="polled", init=False)


@dataclass(frozen=True)
class Sent:
    """One record's delivery report: ``at.offset`` is where the leader put it (``None`` when the
    delivery failed, with ``error`` saying why). ``txn`` names the producer's transaction within
    this process (``None``: not transactional, so acknowledged means committed); ``source`` is the
    input record this output was made from."""

    process: str
    time: float
    topic: str
    partition: int
    offset: int | None
    value: str | None
    key: str | None = None
    source: Position | None = None
    txn: int | None = None
    transactional_id: str | None = None
    producer_id: int | None = None
    producer_epoch: int | None = None
    error: str | None = None
    kind: str = field(default="sent", init=False)

    @property
    def acked(self) -> bool:
        """The leader acknowledged it (acks=all: the in-sync replicas have it)."""
        return self.error is None and self.offset is not None

    @property
    def at(self) -> Position | None:
        return None if self.offset is None else Position(self.topic, self.partition, self.offset)


@dataclass(frozen=True)
class Committed:
    """``commit_transaction`` returned (``txn`` set), or a non-transactional offset commit returned
    (``txn`` is ``None``); ``offsets`` are the input positions committed with it."""

    process: str
    time: float
    txn: int | None
    offsets: tuple[Position, ...] = ()
    transactional_id: str | None = None
    via: str = ""
    """How a commit outside a transaction came about: ``"commit()"`` (the application's call) or
    ``"auto commit"`` (the consumer's timer, ``enable.auto.commit``); empty for a transaction's commit."""
    kind: str = field(default="committed", init=False)


@dataclass(frozen=True)
class Aborted:
    """``abort_transaction`` returned; the processor rewinds its consumer to the committed offsets."""

    process: str
    time: float
    txn: int
    reason: str = ""
    transactional_id: str | None = None
    kind: str = field(default="aborted", init=False)


@dataclass(frozen=True)
class Failed:
    """A client call raised (or a poll returned) a Kafka error: ``call`` names it (``poll``,
    ``send_offsets_to_transaction``, ...), ``error`` is librdkafka's name of the error (``_FENCED``,
    ``UNKNOWN_MEMBER_ID``, ``_MAX_POLL_EXCEEDED``) and ``fatal``/``abortable`` its class, as
    ``KafkaError.fatal()``/``txn_requires_abort()`` said."""

    process: str
    time: float
    call: str
    error: str
    message: str = ""
    fatal: bool = False
    abortable: bool = False
    transactional_id: str | None = None
    kind: str = field(default="failed", init=False)


Event: TypeAlias = Assigned | Polled | Sent | Committed | Aborted | Failed
"""Every kind of event a history holds."""

KINDS: dict[str, type[Event]] = {c.kind: c for c in (Assigned, Polled, Sent, Committed, Aborted, Failed)}


def to_json(event: Event) -> str:
    """One line of a history file (no newline)."""
    return json.dumps(asdict(event), separators=(",", ":"), sort_keys=True)


def _position(raw: Any) -> Position | None:
    return None if raw is None else Position(str(raw["topic"]), int(raw["partition"]), int(raw["offset"]))


def from_json(line: str) -> Event:
    """The event a line of a history file holds; a line that is not one raises :class:`HistoryFormatError`."""
    event = decode(line)
    if isinstance(event, str):
        raise HistoryFormatError(f"Not a history event ({event}): give a line that HistoryWriter wrote.")
    return event


def decode(line: str) -> Event | str:
    """The event a line holds, or why it holds none (``read_history`` words the error, with the line's
    number; a torn last line is no error)."""
    try:
        raw = json.loads(line)
    except ValueError as e:
        return f"not JSON: {e}"
    if not isinstance(raw, dict):
        return "not a JSON object"
    cls = KINDS.get(raw.pop("kind", None))
    if cls is None:
        return f"its kind is none of {sorted(KINDS)}"
    try:
        return _event(cls, raw)
    except (KeyError, TypeError, ValueError) as e:
        return f"wrong fields for kind {cls.kind!r}: {e!r}"


def _event(cls: type[Event], raw: dict[str, Any]) -> Event:
    if cls is Polled:
        raw["at"] = _position(raw["at"])
    elif cls is Sent:
        raw["source"] = _position(raw.get("source"))
    elif cls is Committed:
        raw["offsets"] = tuple(_position(p) for p in raw.get("offsets", ()))
    elif cls is Assigned:
        raw["partitions"] = tuple((str(t), int(p)) for t, p in raw["partitions"])
        raw["offsets"] = tuple(_position(p) for p in raw.get("offsets", ()))
    return cls(**raw)
