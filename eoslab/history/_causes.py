"""What the checker blames: mistakes a processor's history shows, named beside the anomalies they explain.

An anomaly says what reached the output; a cause says what the processor did that let it happen. Three
are read from the history alone, each a mistake practitioners make with exactly-once pipelines:

- ``offsets_outside_txn``: a process that writes its outputs in transactions also committed consumer
  offsets outside them (the consumer's timer, ``enable.auto.commit``, librdkafka's default; or a
  ``consumer.commit()``). Those offsets no longer commit or abort with the outputs: an input whose offset
  was committed while its outputs' transaction aborted is never processed (a missing output), and an
  input whose outputs committed in a transaction that carried no offsets for it is processed again after
  a crash (a duplicate). Both are blamed on it, input by input.
- ``left_group``: the consumer left its group, most often because the time between two polls exceeded
  ``max.poll.interval.ms`` (KIP-62); the group coordinator then refuses the transaction's offsets
  (UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION, KIP-447) and the batch is aborted and redone.
- ``fenced``: a producer call was refused because another producer initialised the same
  ``transactional.id`` (KIP-98's zombie fencing); two live instances sharing one id fence each other in turn.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeGuard

from eoslab.history._events import Aborted, Committed, Event, Failed, Position, Sent

if TYPE_CHECKING:
    from eoslab.history._final import FinalRead

MAX_CAUSE_EXAMPLES = 5


@dataclass(frozen=True)
class CauseKind:
    """One kind of cause: its name, a label, what it means, and where the rule it breaks is written."""

    name: str
    label: str
    meaning: str
    source: str


CAUSES: dict[str, CauseKind] = {
    k.name: k
    for k in (
        CauseKind(
            "offsets_outside_txn",
            "offsets committed outside a transaction",
            "a transactional processor's consumer committed offsets itself (enable.auto.commit's timer, or "
            "consumer.commit()): they no longer commit or abort with the outputs",
            "KIP-98 (sendOffsetsToTransaction); librdkafka CONFIGURATION.md, enable.auto.commit (default true)",
        ),
        CauseKind(
            "left_group",
            "left its consumer group",
            "the consumer was removed from its group (max.poll.interval.ms exceeded between two polls): the "
            "group coordinator refuses its transaction's offsets and the batch is aborted and redone",
            "KIP-62 (max.poll.interval.ms); KIP-447 (the group metadata checked on TxnOffsetCommit)",
        ),
        CauseKind(
            "fenced",
            "fenced through a shared transactional.id",
            "a producer call refused because another producer initialised the same transactional.id: the "
            "older instance must stop",
            "KIP-98 (zombie fencing by transactional.id)",
        ),
    )
}
"""Every cause the checker names, in the order it reports them."""

LEFT_GROUP_ERRORS = frozenset({"_MAX_POLL_EXCEEDED"})
"""A poll's error when the consumer left its group (librdkafka: rd_kafka_cgrp_max_poll_interval_check)."""
REFUSED_MEMBER_ERRORS = frozenset({"UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID"})
"""The group coordinator's answer to offsets from a member it no longer knows (KIP-447)."""
FENCED_ERRORS = frozenset({"_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH"})


@dataclass(frozen=True)
class Cause:
    """One cause found: how often it happened, how many cases of each anomaly it explains, examples."""

    kind: CauseKind
    count: int
    blamed: dict[str, int] = field(default_factory=dict)
    examples: tuple[str, ...] = ()

    def sentence(self) -> str:
        blamed = ", ".join(f"{n} {a.replace('_', ' ')}{'' if n == 1 else 's'}" for a, n in self.blamed.items() if n)
        return f"{self.kind.label} ({self.count}×)" + (f": blamed for {blamed}" if blamed else "")


@dataclass(frozen=True)
class Evidence:
    """What the causes are judged from: the events, the output's read_committed read, the inputs' read,
    and a function giving the input an output record was made from (``None``: unknown)."""

    events: list[Event]
    output: FinalRead
    inputs: FinalRead | None
    origin: dict[Position, Position | None]
    """output position (read_committed) -> the input it was made from."""


def _clock(events: list[Event]) -> float:
    return min((e.time for e in events), default=0.0)


def _transactional(events: list[Event]) -> set[str]:
    """The processes that ran transactions (a transactional delivery or commit)."""
    return {e.process for e in events if isinstance(e, (Sent, Committed)) and e.txn is not None}


def _of(kind: type[Any], events: list[Event]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def _covers(commit: Committed, at: Position) -> bool:
    """The commit put the partition's offset past ``at``: ``at`` is not to be read again."""
    return any(p.topic == at.topic and p.partition == at.partition and p.offset > at.offset for p in commit.offsets)


def _missing_behind(ev: Evidence, plain: list[Committed], examples: list[str]) -> int:
    """Inputs with no visible output whose offset a commit outside a transaction put behind the group."""
    produced, t0, n = set(ev.origin.values()), _clock(ev.events), 0
    inputs = ev.inputs.positions() if ev.inputs is not None else []
    for at in (at for at in inputs if at not in produced):
        past = next((c for c in plain if _covers(c, at)), None)
        if past is not None:
            n += 1
            examples.append(
                f"input {at} has no output, but {past.process} committed its offset outside a transaction "
                f"({past.via or 'commit()'}, +{past.time - t0:.1f} s) while the transaction that wrote its output "
                "never committed"
            )
    return n


def _offsets_outside(ev: Evidence) -> Cause | None:
    txn_procs = _transactional(ev.events)
    plain = [c for c in _of(Committed, ev.events) if c.txn is None and c.process in txn_procs]
    if not plain:
        return None
    examples: list[str] = []
    blamed = {"missing_output": _missing_behind(ev, plain, examples)}
    blamed["duplicate"] = _duplicates_without_offsets(ev, examples)
    vias = sorted({c.via or "commit()" for c in plain})
    first = plain[0]
    head = (
        f"{len(plain)} offset commit(s) outside a transaction, via {' and '.join(vias)}; the first: {first.process} "
        f"committed {', '.join(map(str, first.offsets))}"
    )
    return Cause(CAUSES["offsets_outside_txn"], len(plain), blamed, (head, *examples[: MAX_CAUSE_EXAMPLES - 1]))


def _carried(events: list[Event]) -> dict[tuple[str, int], set[tuple[str, int]]]:
    """(process, txn) -> the input partitions whose offsets that committed transaction carried."""
    carried: dict[tuple[str, int], set[tuple[str, int]]] = defaultdict(set)
    for e in _of(Committed, events):
        if e.txn is not None:
            carried[(e.process, e.txn)] |= {(p.topic, p.partition) for p in e.offsets}
    return carried


def _transaction_at(events: list[Event]) -> dict[Position, tuple[str, int]]:
    """Output offset -> the (process, txn) whose delivery report put a record there."""
    return {s.at: (s.process, s.txn) for s in _of(Sent, events) if s.at is not None and s.txn is not None}


def _outputs_by_input(origin: dict[Position, Position | None]) -> dict[Position, list[Position]]:
    """Input offset -> the visible outputs made from it."""
    outputs: dict[Position, list[Position]] = defaultdict(list)
    for out, source in origin.items():
        if source is not None:
            outputs[source].append(out)
    return outputs


def _duplicates_without_offsets(ev: Evidence, examples: list[str]) -> int:
    """Inputs with more than one visible output, one of them from a committed transaction whose offsets did
    not cover that input: a restart redid it because its offset was to be committed outside."""
    carried = _carried(ev.events)
    writer = _transaction_at(ev.events)
    n = 0
    for source, places in _outputs_by_input(ev.origin).items():
        if len(places) < 2:
            continue
        txns = [writer[o] for o in places if o in writer]
        if any((source.topic, source.partition) not in carried.get(t, set()) for t in txns):
            n += 1
            examples.append(
                f"input {source} has {len(places)} outputs: a transaction wrote one without carrying the input's "
                "offset, so the restarted processor read it again"
            )
    return n


def _failed_with(events: list[Event], errors: Collection[str]) -> list[Failed]:
    return [e for e in _of(Failed, events) if e.error in errors]


def _left_group(ev: Evidence) -> Cause | None:
    left = _failed_with(ev.events, LEFT_GROUP_ERRORS)
    refused = _failed_with(ev.events, REFUSED_MEMBER_ERRORS)
    if not left and not refused:
        return None
    t0 = _clock(ev.events)
    examples = [f"{e.process} left its group (+{e.time - t0:.1f} s): {e.message}" for e in left]
    examples += [f"{e.process}'s {e.call} refused (+{e.time - t0:.1f} s): {e.error}" for e in refused]
    who = {e.process for e in left + refused}
    aborted = sum(1 for e in _of(Aborted, ev.events) if e.process in who)
    return Cause(
        CAUSES["left_group"], len(left) or len(refused), {"aborted_transaction": aborted},
        tuple(examples[:MAX_CAUSE_EXAMPLES]),
    )  # fmt: skip


def _is_fence(e: Event) -> TypeGuard[Failed]:
    return isinstance(e, Failed) and e.error in FENCED_ERRORS and e.fatal


def _incarnations(events: list[Event]) -> dict[str, set[str]]:
    """transactional.id -> the processes (incarnations) that used it."""
    by_id: dict[str, set[str]] = defaultdict(set)
    for e in events:
        if (tid := getattr(e, "transactional_id", None)) is not None:
            by_id[tid].add(e.process)
    return by_id


def _fenced(ev: Evidence) -> Cause | None:
    """One case per incarnation fenced (librdkafka reports it to error_cb and to the call it failed)."""
    first: dict[str, Failed] = {}
    for e in filter(_is_fence, ev.events):
        first.setdefault(e.process, e)
    if not first:
        return None
    t0 = _clock(ev.events)
    fenced = Counter(e.transactional_id for e in first.values())
    examples = [
        f"transactional.id {tid}: {fenced[tid]} of its {len(procs)} incarnations fenced"
        for tid, procs in _incarnations(ev.events).items()
        if tid in fenced
    ]
    examples += [f"{e.process} fenced (+{e.time - t0:.1f} s) in {e.call}: {e.error}" for e in first.values()]
    return Cause(CAUSES["fenced"], len(first), {}, tuple(examples[:MAX_CAUSE_EXAMPLES]))


def find_causes(ev: Evidence) -> tuple[Cause, ...]:
    """Every cause the history shows, in :data:`CAUSES` order."""
    found = (_offsets_outside(ev), _left_group(ev), _fenced(ev))
    return tuple(c for c in found if c is not None)
