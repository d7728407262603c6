"""The checker: processors' histories plus the final reads in, a :class:`Verdict` out. A pure function.

The model is Jepsen's (``jepsen/src/jepsen/tests/kafka.clj``, see :mod:`eoslab.history._anomalies`),
cut down to a consume-transform-produce pipeline:

- a *writer* of a record is the ``Sent`` event whose delivery report put that value at that offset;
  failing that, every ``Sent`` of that value (a delivery report can be lost with its process);
- a transaction's outcome is its ``Committed`` or ``Aborted`` event; without either (the process was
  killed in between) it is unknown, and like Jepsen's ``must-have-committed?`` it counts as committed
  once read_committed returned one of its records;
- an output's *origin* is the input record it was made from (``Sent.source``): exactly once means one
  visible output per origin. A record no history names a writer for (its writer was killed before
  the delivery report came back) has its origin read from its value, when the caller says how
  (``check(..., origin=...)``: the pipeline's values name their input); otherwise the value stands alone.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from eoslab.history._anomalies import ANOMALIES
from eoslab.history._causes import Evidence, find_causes
from eoslab.history._events import Aborted, Assigned, Committed, Event, HistoryFormatError, Polled, Position, Sent
from eoslab.history._final import FinalRead
from eoslab.history._log import History, read_history
from eoslab.history._verdict import MAX_EXAMPLES, Cases, Verdict

TxnKey = tuple[str, int]


@dataclass
class _Found:
    """Every case of each anomaly, as sentences; the verdict keeps the count and the first few."""

    cases: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, name: str, example: str) -> None:
        self.cases[name].append(example)

    def verdict(self, names: Iterable[str], stats: dict[str, int], causes: tuple[Any, ...] = ()) -> Verdict:
        return Verdict(
            {n: Cases(ANOMALIES[n], len(self.cases[n]), tuple(self.cases[n][:MAX_EXAMPLES])) for n in names},
            stats,
            causes,
        )


def _short(value: str | None) -> str:
    return repr(value) if value is None or len(value) <= 40 else repr(value[:37] + "...")


def _txn_name(s: Sent | Committed | Aborted) -> str:
    tid = f" ({s.transactional_id})" if s.transactional_id else ""
    return f"{s.process} txn {s.txn}{tid}" if s.txn is not None else f"{s.process} (not transactional)"


def _outcomes(events: list[Event]) -> dict[TxnKey, Committed | Aborted]:
    """Each transaction's last end event, by (process, txn)."""
    ends = (e for e in events if isinstance(e, (Committed, Aborted)))
    return {(e.process, e.txn): e for e in ends if e.txn is not None}


def _landed(s: Sent) -> bool:
    """The send's delivery report put it at an offset."""
    return s.acked and s.at is not None


def _grouped(pairs: Iterable[tuple[Any, Sent]]) -> defaultdict[Any, list[Sent]]:
    groups: defaultdict[Any, list[Sent]] = defaultdict(list)
    for key, s in pairs:
        groups[key].append(s)
    return groups


class _Pipeline:
    """Indexes over the histories and reads that every detector shares."""

    def __init__(
        self,
        events: list[Event],
        committed: FinalRead,
        uncommitted: FinalRead | None,
        origin: Callable[[str | None], Position | None] | None = None,
    ) -> None:
        self.events = events
        self.origin_of = origin
        self.rc, self.ru = committed, uncommitted
        self.outcome = _outcomes(events)
        self.sends = [e for e in events if isinstance(e, Sent)]
        self.by_slot: dict[Position, list[Sent]] = _grouped((s.at, s) for s in self.sends if _landed(s))
        self.by_value: dict[tuple[str, str | None], list[Sent]] = _grouped(((s.topic, s.value), s) for s in self.sends)
        self.rc_at = {committed.at(r): r.value for r in committed.records}
        self.rc_values: dict[int, set[str | None]] = defaultdict(set)
        for r in committed.records:
            self.rc_values[r.partition].add(r.value)
        self.seen_txns = {(s.process, s.txn) for s in self.sends if self._read_in_txn(s)}

    def _read_in_txn(self, s: Sent) -> bool:
        """A transactional send that read_committed returned: its transaction must have committed."""
        return s.txn is not None and self.visible_at(s)

    def writers(self, at: Position, value: str | None) -> list[Sent]:
        exact = [s for s in self.by_slot.get(at, []) if s.value == value]
        return exact or self.by_value.get((at.topic, value), [])

    def status(self, s: Sent) -> str:
        """committed, aborted, or unknown: what the history says of the send's transaction."""
        if s.txn is None:
            return "committed" if s.acked else "unknown"
        end = self.outcome.get((s.process, s.txn))
        if isinstance(end, Committed):
            return "committed"
        if isinstance(end, Aborted):
            return "aborted"
        return "committed" if (s.process, s.txn) in self.seen_txns else "unknown"

    def visible_at(self, s: Sent) -> bool:
        return s.at is not None and s.at in self.rc_at and self.rc_at[s.at] == s.value

    def visible(self, s: Sent) -> bool:
        return self.visible_at(s) or (s.topic == self.rc.topic and s.value in self.rc_values[s.partition])

    def origin(self, at: Position, value: str | None) -> tuple[str, object]:
        for w in self.writers(at, value):
            if w.source is not None:
                return ("input", w.source)
        if self.origin_of is not None and (source := self.origin_of(value)) is not None:
            return ("input", source)
        return ("value", value)


def _aborted_reads(p: _Pipeline, found: _Found) -> None:
    def judge(at: Position, value: str | None, where: str) -> None:
        writers = p.writers(at, value)
        if writers and all(p.status(w) == "aborted" for w in writers):
            w = writers[0]
            end = p.outcome[(w.process, w.txn)] if w.txn is not None else None
            why = f" ({end.reason})" if isinstance(end, Aborted) and end.reason else ""
            found.add("aborted_read", f"{where} {_short(value)} at {at}, written by {_txn_name(w)}, which aborted{why}")

    for r in p.rc.records:
        judge(p.rc.at(r), r.value, "read_committed returned")
    for e in p.events:
        if isinstance(e, Polled):
            judge(e.at, e.value, f"{e.process} polled")


def _lost_and_unseen(p: _Pipeline, found: _Found) -> None:
    for s in p.sends:
        if s.topic != p.rc.topic or not s.acked or s.offset is None or p.status(s) != "committed" or p.visible(s):
            continue
        there = p.rc_at.get(Position(s.topic, s.partition, s.offset), "nothing")
        said = f"{_txn_name(s)} sent {_short(s.value)} to {s.at} (acknowledged, committed)"
        if p.rc.covers(s.partition, s.offset):
            shown = there if there == "nothing" else _short(there)
            found.add("lost_write", f"{said}; read_committed read past it and returned {shown} there")
        else:
            end = p.rc.ends.get(s.partition, 0)
            found.add("unseen", f"{said}; the read_committed read of partition {s.partition} ended at {end}")


def _torn(p: _Pipeline, found: _Found) -> None:
    by_txn: dict[TxnKey, list[Sent]] = defaultdict(list)
    for s in p.sends:
        if s.txn is not None and s.topic == p.rc.topic and s.acked:
            by_txn[(s.process, s.txn)].append(s)
    for sends in by_txn.values():
        if p.status(sends[0]) != "committed":
            continue
        missing = [s for s in sends if not p.visible(s)]
        if 0 < len(missing) < len(sends):
            gone = ", ".join(f"{s.at} {_short(s.value)}" for s in missing[:3])
            found.add(
                "torn_transaction",
                f"{_txn_name(sends[0])}: read_committed returned {len(sends) - len(missing)} of its "
                f"{len(sends)} records; not {gone}",
            )


def _duplicates(p: _Pipeline, found: _Found) -> None:
    places: dict[tuple[str, object], list[Position]] = defaultdict(list)
    for r in p.rc.records:
        places[p.origin(p.rc.at(r), r.value)].append(p.rc.at(r))
    for (how, what), where in places.items():
        if len(where) > 1:
            of = f"input {what}" if how == "input" else f"value {_short(what)}"  # type: ignore[arg-type]
            found.add("duplicate", f"{of}: read_committed returned its output at {', '.join(map(str, where))}")


def _missing(p: _Pipeline, inputs: FinalRead, found: _Found) -> None:
    origins = {p.origin(p.rc.at(r), r.value) for r in p.rc.records}
    for r in inputs.records:
        if ("input", inputs.at(r)) not in origins:
            found.add("missing_output", f"input {inputs.at(r)} {_short(r.value)}: no output in {p.rc.topic}")


def _claims(p: _Pipeline, inputs: FinalRead | None) -> Iterator[tuple[Position, str | None, str]]:
    """Each claim of the value an offset holds, with who makes it: a delivery report, a poll, a final read."""
    for s in p.sends:
        if s.acked and s.at is not None:
            yield s.at, s.value, f"sent by {_txn_name(s)}"
    for e in p.events:
        if isinstance(e, Polled):
            yield e.at, e.value, f"polled by {e.process}"
    for read in (p.rc, p.ru, inputs):
        for r in read.records if read is not None else ():
            yield read.at(r), r.value, f"{read.isolation} read"  # type: ignore[union-attr]


def _inconsistent(p: _Pipeline, inputs: FinalRead | None, found: _Found) -> None:
    seen: dict[Position, dict[str | None, list[str]]] = defaultdict(lambda: defaultdict(list))
    for at, value, who in _claims(p, inputs):
        seen[at][value].append(who)
    for at, values in sorted(seen.items()):
        if len(values) > 1:
            said = "; ".join(f"{_short(v)} ({', '.join(dict.fromkeys(w))})" for v, w in values.items())
            found.add("inconsistent_offsets", f"{at} holds {len(values)} values: {said}")


class _ReadPosition:
    """One process's last read offset per partition (and how it got there), moved by its events."""

    def __init__(self, process: str, found: _Found) -> None:
        self.process, self.found = process, found
        self.last: dict[tuple[str, int], tuple[int, str]] = {}  # partition -> (offset, how we got there)
        self.committed: dict[tuple[str, int], int] = {}

    def assigned(self, e: Assigned) -> None:
        for tp in e.partitions:
            self.last.pop(tp, None)
        self.committed.update({(o.topic, o.partition): o.offset for o in e.offsets})

    def committed_txn(self, e: Committed) -> None:
        self.committed.update({(o.topic, o.partition): o.offset for o in e.offsets})

    def aborted(self, e: Aborted) -> None:
        """The processor rewinds to its committed offsets, no further."""
        self.last = {
            tp: (
                self.committed[tp] - 1,
                f"the rewind after aborting txn {e.txn} to its committed offset {self.committed[tp]}",
            )
            for tp in self.last
            if tp in self.committed
        }

    def polled(self, e: Polled) -> None:
        tp = (e.at.topic, e.at.partition)
        if tp in self.last and e.at.offset <= self.last[tp][0]:
            self.found.add("nonmonotonic_poll", f"{self.process} polled {e.at} after {self.last[tp][1]}")
        self.last[tp] = (e.at.offset, f"{Position(*tp, e.at.offset)}")


_MOVES: dict[type, Callable[[_ReadPosition, Any], None]] = {
    Assigned: _ReadPosition.assigned,
    Committed: _ReadPosition.committed_txn,
    Aborted: _ReadPosition.aborted,
    Polled: _ReadPosition.polled,
}


def _nonmonotonic(p: _Pipeline, found: _Found) -> None:
    by_process: dict[str, list[Event]] = defaultdict(list)
    for e in p.events:
        by_process[e.process].append(e)
    for process, events in by_process.items():
        reader = _ReadPosition(process, found)
        for e in events:
            if (move := _MOVES.get(type(e))) is not None:
                move(reader, e)


def _events_of(h: History | Iterable[Event] | str | os.PathLike[str]) -> list[Event]:
    if isinstance(h, (str, os.PathLike)):
        return read_history(h).events
    return list(h)


def _output_reads(reads: Iterable[FinalRead]) -> tuple[FinalRead, FinalRead | None]:
    """The output's read_committed read (required) and its read_uncommitted one (if given), of one topic."""
    by_level = {r.isolation: r for r in reads}
    if "read_committed" not in by_level:
        raise HistoryFormatError(
            "check() needs the output read with read_committed: pass read_final(..., 'read_committed')."
        )
    rc, ru = by_level["read_committed"], by_level.get("read_uncommitted")
    if ru is not None and ru.topic != rc.topic:
        raise HistoryFormatError(
            f"The two final reads are of different topics ({rc.topic}, {ru.topic}): read one output."
        )
    return rc, ru


def _stats(events: list[Event], rc: FinalRead, ru: FinalRead | None) -> dict[str, int]:
    """What the verdict judged: processes, events, transactions ended each way, records read."""
    ends = [e for e in events if isinstance(e, (Committed, Aborted)) and e.txn is not None]
    stats = {
        "processes": len({e.process for e in events}),
        "events": len(events),
        "committed txns": sum(isinstance(e, Committed) for e in ends),
        "aborted txns": sum(isinstance(e, Aborted) for e in ends),
        "read_committed records": len(rc.records),
    }
    if ru is not None:
        stats["read_uncommitted records"] = len(ru.records)
    return stats


def check(
    histories: Iterable[History | Iterable[Event] | str | os.PathLike[str]],
    reads: Iterable[FinalRead],
    *,
    inputs: FinalRead | None = None,
    origin: Callable[[str | None], Position | None] | None = None,
) -> Verdict:
    """Check the processors' ``histories`` against the final ``reads`` of their output topic (one
    ``read_committed`` read, and a ``read_uncommitted`` one when given), and name the causes the histories
    show (:data:`eoslab.history.CAUSES`: offsets committed outside a transaction, a consumer that left its
    group, a producer fenced through a shared ``transactional.id``), each with the anomalies it explains.
    With ``inputs`` (the input topic read with ``read_committed`` after the processors stopped) also check
    that every input has an output (``missing_output``); without it that anomaly is not checked, not zero. ``origin``
    reads the input a value was made from, for records whose writer no history names (a process
    killed before its delivery report): without it such a record is a duplicate of nothing.
    """
    rc, ru = _output_reads(reads)
    events = [e for h in histories for e in _events_of(h)]
    p = _Pipeline(events, rc, ru, origin)
    found = _Found()
    _lost_and_unseen(p, found)
    _duplicates(p, found)
    _aborted_reads(p, found)
    _torn(p, found)
    _inconsistent(p, inputs, found)
    _nonmonotonic(p, found)
    names = [n for n in ANOMALIES if n != "missing_output" or inputs is not None]
    if inputs is not None:
        _missing(p, inputs, found)
    return found.verdict(names, _stats(events, rc, ru), find_causes(_evidence(p, inputs)))


def _evidence(p: _Pipeline, inputs: FinalRead | None) -> Evidence:
    """What the causes are judged from: each visible output's input, where the histories or its value say."""
    origin: dict[Position, Position | None] = {}
    for r in p.rc.records:
        how, what = p.origin(p.rc.at(r), r.value)
        origin[p.rc.at(r)] = what if how == "input" and isinstance(what, Position) else None
    return Evidence(p.events, p.rc, inputs, origin)
