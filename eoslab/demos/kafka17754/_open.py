"""The moment :func:`~eoslab.demos.kafka17754.delayed_endtxn` needs: a transaction of the processor OPEN with one
Produce written (its answer held) and one Produce lost, so that a late EndTxn(commit) of an earlier transaction
commits the first part of it and the second part then fails.

Both rules must act on ONE transaction. Rules added at an arbitrary moment land at an arbitrary point of the
processor's work: between the two Produce requests of one transaction, the held one then catches this transaction
and the lost one the next; the late copy commits a transaction that has nothing left to fail, the processor's own
commit is answered NONE (a retried commit of a completed transaction), and there is no anomaly to see: the
processor exits 0. So the rules are added while the processor can
send no Produce at all — blocked in ``commit_transaction()``, waiting for an EndTxn answer — and the first Produces
after it belong to the next transaction. That transaction may still write one partition only (a batch is whatever
``consume()`` returned); then an EndTxn of the processor lies between the two requests the rules acted on, and the
processor is held at its next commit (its EndTxn's answer held :data:`FREEZE_S`) while the rules are added again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from eoslab.demos.pipeline import PipelineError
from eoslab.faults import Fault, Proxy

HOLD_S = 5.0
"""How long the answer to the written Produce is held: the transaction stays open at least this long."""
FREEZE_S = 2.0
"""How long the answer to the processor's EndTxn is held when the rules are added again: it sends nothing meanwhile."""
ATTEMPTS = 3
"""Transactions tried before the experiment gives up (a second is rare: a batch with one partition's records)."""

WaitApplied = Callable[[Fault, str], dict[str, Any]]
"""Waits until a rule has acted and returns that trace row (raising if the processor exits first)."""


@dataclass(frozen=True)
class OpenTransaction:
    """The trace rows of the written Produce (answer held) and the lost one, and how many transactions it took."""

    written: dict[str, Any]
    lost: dict[str, Any]
    attempts: int


def arm(proxy: Proxy, client_id: str, written_on: int, lost_on: int) -> tuple[Fault, Fault]:
    """The two rules: the next Produce to broker ``written_on`` is written and its answer held HOLD_S; the next
    Produce to broker ``lost_on`` is lost on its way. Add them while the processor is blocked in a commit."""
    held = proxy.delay_response(HOLD_S, api="Produce", client_id=client_id, broker=written_on, times=1).inject()
    lost = proxy.drop_request(api="Produce", client_id=client_id, broker=lost_on, times=1).inject()
    return held, lost


def same_transaction(end_txns: Iterable[dict[str, Any]], a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether trace rows ``a`` and ``b`` (two requests of one producer) belong to one transaction: no EndTxn of that
    producer between them (a transaction ends with its EndTxn, commit or abort)."""
    low, high = sorted((int(a["id"]), int(b["id"])))
    return not any(low < int(r["id"]) < high for r in end_txns)


def open_transaction(
    proxy: Proxy, client_id: str, brokers: tuple[int, int], armed: tuple[Fault, Fault], wait: WaitApplied
) -> OpenTransaction:
    """Until the ``armed`` rules have acted on one transaction, which is then open; if they acted on two, the
    processor is held at its next commit and the rules added again (at most :data:`ATTEMPTS` transactions)."""
    written_on, lost_on = brokers
    held, lost = armed
    for attempt in range(1, ATTEMPTS + 1):
        written = wait(held, f"a Produce of the next transaction written by broker {written_on}, its answer held")
        dropped = wait(lost, f"a Produce of the next transaction to broker {lost_on}, lost")
        if same_transaction(proxy.trace(client_id=client_id, api="EndTxn"), written, dropped):
            return OpenTransaction(written, dropped, attempt)
        freeze = proxy.delay_response(FREEZE_S, api="EndTxn", client_id=client_id, times=1).inject()
        wait(freeze, "the processor's next EndTxn, its answer held while the rules are added again")
        held, lost = arm(proxy, client_id, written_on, lost_on)
    raise PipelineError(
        f"in {ATTEMPTS} transactions in a row the processor wrote one output partition only, so no transaction "
        "had a Produce written and one lost: run the experiment again."
    )
