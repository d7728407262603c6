"""Checks of lab 04 (read_committed): each judges the learner's answer against what Kafka did.

The truth is Kafka's: real consumers with each isolation level set explicitly, ListOffsets
(the high watermark under read_uncommitted, the last stable offset under read_committed),
DescribeProducers, and the markers on disk. The logs are written at run time from random
patterns (see :mod:`eoslab.grading._lab04`), so no constant answer can pass.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eoslab import inspect as ins
from eoslab.cluster import Cluster
from eoslab.grading import _lab04 as setup
from eoslab.labcheck import Verdict, guarded, verdict

ISOLATIONS = ("read_uncommitted", "read_committed")


def scenario_batches(cluster: Cluster) -> tuple[str, dict[int, list[ins.Batch]]]:
    """What tasks 1 and 2 give the learner: the topic, and each partition's batches as DumpLogSegments prints them."""
    s = setup.scenario(cluster)
    return s.topic, s.batches


def _markers(batches: list[ins.Batch]) -> set[int]:
    return {b.base_offset for b in batches if b.is_control}


def _hint_t1(batches: list[ins.Batch], iso: str, got: list[int], want: list[int], lso: int, hw: int) -> str:
    extra, missing = set(got) - set(want), set(want) - set(got)
    if extra & _markers(batches):
        return (
            "a transaction marker (a control batch: COMMIT or ABORT) takes an offset but is never returned "
            "to an application, at any isolation level."
        )
    if iso == "read_committed" and extra and min(extra) >= lso:
        return (
            f"read_committed stops at the last stable offset ({lso} here: the first offset of the earliest open "
            "transaction): even committed or plain records after it wait until that transaction ends."
        )
    if iso == "read_committed" and extra:
        return (
            "read_committed drops the records of aborted transactions (a batch's producer id, then that "
            "producer's next marker: ABORT) and never returns an open transaction's records."
        )
    if iso == "read_uncommitted" and missing:
        return (
            "read_uncommitted returns every data record up to the high watermark, aborted and open "
            "transactions' records included: only markers are skipped."
        )
    if any(o >= hw for o in extra):
        return f"no consumer reads at or past the high watermark ({hw}): offsets run from 0 to HW - 1."
    return "walk the batches in offset order; a transactional batch's fate is its producer's NEXT marker."


@guarded("t1", points=2)
def check_predict(cluster: Cluster, predict: Callable[[list[Any], str], Any]) -> Verdict:
    """Task 1: ``predict(batches, isolation)`` lists the offsets a consumer with that isolation level returns,
    reading the partition from offset 0: judged against real consumers, on three random logs, both levels."""
    s = setup.scenario(cluster)
    wrong = []
    for part in sorted(s.batches):
        for iso in ISOLATIONS:
            got = predict(list(s.batches[part]), iso)
            got = sorted(int(o) for o in got) if got is not None else None
            want = s.returned[(part, iso)]
            if got != want:
                wrong.append((part, iso, got, want))
    if not wrong:
        return verdict("t1", True, ok="all 6 predictions match what the consumers returned.", points=2)
    part, iso, got, want = wrong[0]
    o = s.offsets[part]
    hint = (
        "return a list of offsets (ints)."
        if got is None
        else _hint_t1(s.batches[part], iso, got, want, o.last_stable, o.high_watermark)
    )
    return verdict(
        "t1",
        False,
        ok="",
        saw=f"{len(wrong)} of 6 wrong; partition {part}, {iso}: you said {got}, the consumer returned {want}",
        hint=hint,
        points=2,
    )


@guarded("t2")
def check_lso(cluster: Cluster, last_stable_offset: Callable[[list[Any], int], Any]) -> Verdict:
    """Task 2: ``last_stable_offset(batches, high_watermark)`` is the LSO ListOffsets gives under read_committed,
    for a partition with one open transaction, one with two, one with none."""
    s = setup.scenario(cluster)
    wrong = []
    for part in sorted(s.batches):
        o = s.offsets[part]
        got = last_stable_offset(list(s.batches[part]), o.high_watermark)
        if got != o.last_stable:
            wrong.append((part, got, o))
    if not wrong:
        return verdict("t2", True, ok="the LSO of all 3 partitions is right (one, two and no open transactions).")
    part, got, o = wrong[0]
    if got == o.high_watermark:
        hint = "the LSO equals the HW only while no transaction is open; an open one holds it at its first offset."
    elif got == o.last_stable - 1:
        hint = (
            "off by one: the LSO is the first offset OF the earliest open transaction (a read_committed consumer "
            "returns everything below it), not the offset before it."
        )
    elif isinstance(got, int) and got > o.last_stable:
        hint = "with two open transactions the EARLIEST one holds the LSO: the minimum of their first offsets."
    else:
        hint = "an open transaction: a transactional data batch whose producer wrote no marker after it."
    return verdict(
        "t2",
        False,
        ok="",
        saw=f"partition {part}: you said {got}; ListOffsets (read_committed) says {o.last_stable}, "
        f"HW {o.high_watermark}",
        hint=hint,
    )


@dataclass(frozen=True)
class _Unblocked:
    """What the cluster showed around the learner's ``unblock``: the open transactions before it (producer id ->
    CurrentTransactionStartOffset), the one holding the LSO, the LSO before and after, the producers an ABORT
    marker ended, and the producers still open after."""

    open_: dict[int, int]
    holder: int
    lso_before: int
    lso_after: int
    aborts: set[int]
    still_open: set[int]

    @property
    def ended_wrong(self) -> list[int]:
        return sorted((set(self.open_) - {self.holder}) - self.still_open)


def _open_transactions(cluster: Cluster, topic: str) -> dict[int, int]:
    """Producer id -> CurrentTransactionStartOffset of each open transaction on the topic's partition 0."""
    states = {s.producer_id: s.current_txn_start_offset for s in ins.describe_producers(cluster, topic, 0)}
    return {pid: start for pid, start in states.items() if start is not None}


def _run_unblock(cluster: Cluster, unblock: Callable[[Cluster, str, int], Any]) -> _Unblocked:
    log = setup.open_logs(cluster, random.Random())
    try:
        before = ins.partition_offsets(cluster, log.topic, 0).last_stable
        open_ = _open_transactions(cluster, log.topic)
        holder = min(open_, key=lambda pid: open_[pid])
        unblock(cluster, log.topic, 0)
        aborts = {m.producer_id for m in ins.markers(cluster, log.topic, 0) if m.marker == "ABORT"}
        still_open = set(_open_transactions(cluster, log.topic))
        lso = ins.partition_offsets(cluster, log.topic, 0).last_stable
    finally:
        try:
            log.close()
        except Exception:  # noqa: BLE001 - a producer whose transaction the learner aborted may be in error
            pass
    return _Unblocked(open_, holder, before, lso, aborts, still_open)


_HINTS_T3 = {  # (another transaction ended, the holder still open) -> hint
    (True, True): (
        "you ended another transaction: the LSO is held by the one with the SMALLEST CurrentTransactionStartOffset."
    ),
    (True, False): "end only the transaction holding the LSO: the others belong to producers that will still end them.",
    (False, True): (
        "describe-producers gives each open transaction's CurrentTransactionStartOffset; "
        "ins.abort_transaction(cluster, topic, partition, start_offset) ends the one at the LSO."
    ),
}


@guarded("t3", points=2)
def check_unblock(cluster: Cluster, unblock: Callable[[Cluster, str, int], Any]) -> Verdict:
    """Task 3: ``unblock(cluster, topic, partition)`` ends — with Kafka's tools — exactly the transaction
    holding the partition's LSO; the other open transactions stay open."""
    u = _run_unblock(cluster, unblock)
    holder_open = u.holder in u.still_open
    if not holder_open and not u.ended_wrong:
        return verdict(
            "t3",
            True,
            ok=f"the transaction at offset {u.open_[u.holder]} (producer {u.holder}) ended; "
            f"LSO {u.lso_before} → {u.lso_after}; {len(u.open_) - 1} other(s) still open.",
            points=2,
        )
    return verdict(
        "t3",
        False,
        ok="",
        saw=f"open before: {u.open_}; LSO {u.lso_before} held by producer {u.holder}; "
        f"ABORT markers for {sorted(u.aborts)}; still open after: {sorted(u.still_open)}",
        expected=f"producer {u.holder}'s transaction ended, the others still open",
        hint=_HINTS_T3[(bool(u.ended_wrong), holder_open)],
        points=2,
    )


def _lag_at_high_watermark(got: dict[int, Any], want: dict[int, tuple[int, bool]], hw_lag: dict[int, int]) -> bool:
    return any(got.get(p, (None,))[0] == hw_lag[p] != want[p][0] for p in want)


def _stall_wrong(got: dict[int, Any], want: dict[int, tuple[int, bool]]) -> bool:
    return any(got.get(p, (0, None))[1] != want[p][1] for p in want)


def _hint_t4(got: Any, want: dict[int, tuple[int, bool]], hw_lag: dict[int, int]) -> str:
    if isinstance(got, dict) and _lag_at_high_watermark(got, want, hw_lag):
        return (
            "a read_committed consumer's lag is measured at the LSO (ListOffsets latest with read_committed), "
            "not at the high watermark: the offsets behind an open transaction are not yet readable."
        )
    if isinstance(got, dict) and _stall_wrong(got, want):
        return (
            "a partition is stalled by an open transaction when its LSO is below its HW; a consumer merely behind "
            "(lag > 0, LSO = HW) is not stalled."
        )
    return "return {partition: (LSO - committed offset, LSO < HW)} for every partition of the topic."


@guarded("t4")
def check_stalled(cluster: Cluster, explain: Callable[[Cluster, str, str], Any]) -> Verdict:
    """Task 4: ``explain(cluster, topic, group)`` returns, per partition, the group's read_committed lag and
    whether an open transaction stalls it: ``{partition: (lag, stalled)}``."""
    s = setup.scenario(cluster)
    got = explain(cluster, s.topic, s.group)
    want = {
        p: (s.offsets[p].last_stable - s.committed[p], s.offsets[p].last_stable < s.offsets[p].high_watermark)
        for p in sorted(s.committed)
    }
    got_n = {int(p): (int(v[0]), bool(v[1])) for p, v in (got or {}).items()} if isinstance(got, dict) else got
    if got_n == want:
        return verdict("t4", True, ok=f"lag and stall right for all {len(want)} partitions: {want}.")
    hw_lag = {p: s.offsets[p].high_watermark - s.committed[p] for p in want}
    return verdict("t4", False, ok="", saw=f"you said {got}", expected=str(want), hint=_hint_t4(got_n, want, hw_lag))
