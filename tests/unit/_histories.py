"""Hand-made pipeline histories for the checker's tests: a clean exactly-once run, and a builder.

The clean run (process ``eos-1``, transactional id ``tx-A``) reads ``in`` (2 partitions) and writes
``out`` (2 partitions). Offsets follow what Kafka does: each commit or abort leaves a marker (a
control record) at the next offset of every partition the transaction wrote::

    txn 1  in[0]@0,1 in[1]@0  ->  out[0]@0 out[1]@0 out[0]@1   committed   markers out[0]@2 out[1]@1
    txn 2  in[0]@2            ->  out[0]@3                     aborted     marker  out[0]@4
    txn 3  in[0]@2,3 (rewound)->  out[0]@5 out[1]@2            committed   markers out[0]@6 out[1]@3
    txn 4  in[1]@1            ->  out[1]@4                     committed   marker  out[1]@5
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from eoslab.history import Aborted, Assigned, Committed, Event, FinalRead, Polled, Position, ReadRecord, Sent

IN, OUT = "in", "out"
P = "eos-1"
TID = "tx-A"
INPUTS = {(0, 0): "a0", (0, 1): "a1", (0, 2): "a2", (0, 3): "a3", (1, 0): "b0", (1, 1): "b1"}


@dataclass
class Run:
    """A history under construction, with the output as the log holds it."""

    events: list[Event] = field(default_factory=list)
    log: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)  # (p, o) -> (value, "c"|"a"|"open")
    ends: dict[int, int] = field(default_factory=lambda: {0: 0, 1: 0})
    clock: float = 1000.0
    process: str = P

    def _t(self) -> float:
        self.clock += 0.01
        return self.clock

    def poll(self, partition: int, offset: int, value: str | None = None) -> None:
        value = INPUTS.get((partition, offset), "?") if value is None else value
        self.events.append(Polled(self.process, self._t(), Position(IN, partition, offset), value))

    def send(self, txn: int | None, partition: int, source: tuple[int, int], value: str | None = None) -> Sent:
        offset = self.ends[partition]
        self.ends[partition] += 1
        value = value or f"{INPUTS[source]}/t{txn}"
        s = Sent(
            self.process,
            self._t(),
            OUT,
            partition,
            offset,
            value,
            source=Position(IN, *source),
            txn=txn,
            transactional_id=TID if txn is not None else None,
        )
        self.events.append(s)
        self.log[(partition, offset)] = (value, "open" if txn is not None else "c")
        return s

    def _end(self, txn: int, outcome: str) -> None:
        mine = [e for e in self.events if isinstance(e, Sent) and e.txn == txn and e.process == self.process]
        for s in mine:
            assert s.offset is not None  # send() gives every record its offset
            self.log[(s.partition, s.offset)] = (s.value or "", outcome)
        for part in sorted({s.partition for s in mine}):
            self.ends[part] += 1  # the marker

    def commit(self, txn: int | None, **offsets: int) -> None:
        pos = tuple(Position(IN, int(k[1:]), v) for k, v in offsets.items())
        self.events.append(Committed(self.process, self._t(), txn, pos, TID if txn is not None else None))
        if txn is not None:
            self._end(txn, "c")

    def abort(self, txn: int, reason: str = "abortable error") -> None:
        self.events.append(Aborted(self.process, self._t(), txn, reason, TID))
        self._end(txn, "a")

    def reads(self) -> tuple[FinalRead, FinalRead]:
        """The output read at both levels, as Kafka would return it from this log."""
        rc = tuple(ReadRecord(p, o, v) for (p, o), (v, st) in sorted(self.log.items()) if st == "c")
        ru = tuple(ReadRecord(p, o, v) for (p, o), (v, _) in sorted(self.log.items()))
        return FinalRead(OUT, "read_committed", rc, dict(self.ends)), FinalRead(
            OUT, "read_uncommitted", ru, dict(self.ends)
        )


def inputs_read(extra: dict[tuple[int, int], str] | None = None) -> FinalRead:
    data = {**INPUTS, **(extra or {})}
    records = tuple(ReadRecord(p, o, v) for (p, o), v in sorted(data.items()))
    ends = {p: max(o for (q, o) in data if q == p) + 1 for p in (0, 1)}
    return FinalRead(IN, "read_committed", records, ends)


def clean_run() -> Run:
    r = Run()
    r.events.append(Assigned(P, r._t(), ((IN, 0), (IN, 1))))
    r.poll(0, 0)
    r.poll(0, 1)
    r.poll(1, 0)
    r.send(1, 0, (0, 0))
    r.send(1, 1, (0, 1))
    r.send(1, 0, (1, 0))
    r.commit(1, p0=2, p1=1)
    r.poll(0, 2)
    r.send(2, 0, (0, 2))
    r.abort(2)
    r.poll(0, 2)
    r.poll(0, 3)
    r.send(3, 0, (0, 2))
    r.send(3, 1, (0, 3))
    r.commit(3, p0=4)
    r.poll(1, 1)
    r.send(4, 1, (1, 1))
    r.commit(4, p1=2)
    return r


def without(read: FinalRead, partition: int, offset: int) -> FinalRead:
    """The read without the record at ``partition``/``offset``."""
    kept = tuple(r for r in read.records if (r.partition, r.offset) != (partition, offset))
    assert len(kept) == len(read.records) - 1, "no such record in the read"
    return dataclasses.replace(read, records=kept)


def plus(read: FinalRead, record: ReadRecord) -> FinalRead:
    """The read with one more record (its partition's end moved past it if needed)."""
    ends = {**read.ends, record.partition: max(read.ends.get(record.partition, 0), record.offset + 1)}
    return dataclasses.replace(read, records=tuple(sorted((*read.records, record))), ends=ends)
