"""librdkafka's own late Produce: every Produce to one partition held by the proxy past the client's timeouts.

The recipe of a classic hanging transaction: the proxy holds each Produce of one producer to
partition A for ``hold_s`` (``delay_request``); the client's ``socket.timeout.ms`` passes, its
messages time out (``message.timeout.ms``), the transaction becomes abortable and the
application aborts it; then the held requests reach the leader — the proxy delivers them even
though the client closed those connections. What the leader answers them, and whether the
partition is left with an open transaction, is measured with verification on and off.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._wait import wait_until
from eoslab.demos import _kept
from eoslab.demos._clients import run_id, transactional_producer, wait_settled
from eoslab.demos.read_committed._late import set_verification, verification
from eoslab.errors import WaitTimeout
from eoslab.faults import Proxy

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

ANSWER_WAIT = 5.0  # after the hold: a relayed answer comes within milliseconds of the release
HOLD_S = 8.0  # longer than the producer's socket and message timeouts below, so every held request is late
HELD_PRODUCER = {
    "transaction.timeout.ms": 30000,
    "message.timeout.ms": 3000,  # a record not acknowledged in 3 s fails: the transaction becomes abortable
    "socket.timeout.ms": 3000,  # a request without an answer for 3 s: the connection is closed
    "linger.ms": 0,
}


@dataclass
class Held:
    verification: bool
    error: str = ""  # what the application saw (delivery report / commit)
    epochs: tuple[int, int] = (-1, -1)  # the producer's epoch before and after the abort
    rows: list[dict[str, Any]] = field(default_factory=list)  # its Produce rows to A in the trace
    offsets: ins.PartitionOffsets | None = None
    hanging: list[ins.HangingTransaction] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "verification": self.verification,
                    "epoch": (r["request"].get("items") or [{}])[0].get("producer_epoch"),
                    "sequence": (r["request"].get("items") or [{}])[0].get("base_sequence"),
                    "fate": r["fate"],
                    "answer": (r.get("response") or {}).get("error") or "(no answer relayed)",
                    "offset": ((r.get("response") or {}).get("items") or [{}])[0].get("base_offset"),
                }
                for r in self.rows
            ]
        )


def _error_text(exc: Exception) -> str:
    return str(exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else exc)


def _held_transaction(p: Any, topic: str, hold_s: float) -> list[str]:
    """One transaction whose record the proxy holds: begin, produce, flush, commit (it fails), abort; the
    errors the client reported (delivery reports keep adding to the list)."""
    errors: list[str] = []
    p.begin_transaction()
    p.produce(topic, b"held", partition=0, on_delivery=lambda err, msg: errors.append(str(err)) if err else None)
    p.flush(hold_s)  # the record times out after message.timeout.ms
    try:
        p.commit_transaction(10)
    except Exception as exc:  # noqa: BLE001 - the abortable error the lesson shows
        errors.append(_error_text(exc))
    p.abort_transaction(30)
    return errors


def _answered_rows(proxy: Proxy, tid: str, mark: int) -> list[dict[str, Any]]:
    """The trace rows of ``tid``'s Produce requests after ``mark``, once the leader answered them all (or as
    they stand after :data:`ANSWER_WAIT`)."""
    rows: list[dict[str, Any]] = []

    def answered() -> bool:
        nonlocal rows
        rows = list(proxy.trace(client_id=tid, api="Produce", since=mark))
        return bool(rows) and all(r.get("response") is not None for r in rows)

    try:
        wait_until(answered, timeout=ANSWER_WAIT, what=f"the leader's answers to {tid}'s held Produce")
    except WaitTimeout:
        pass  # the table then says so; the log below is the evidence either way
    return rows


def held_produce(
    cluster: Cluster, topic: str, *, verify: bool = True, hold_s: float = HOLD_S, reuse: bool = False
) -> Held:
    """Run the recipe once (~hold_s + 5 s); verification is put back on afterwards in any case.

    ``reuse``: the last run kept under the runs folder, if there is one (:mod:`eoslab.demos._kept`)."""
    key = f"held-produce-{'verify' if verify else 'no-verify'}"
    if reuse and (kept := _kept.last(key, Held, cluster.backend.name)) is not None:
        return kept
    run = run_id()
    h = Held(verify)
    if verification(cluster)[0] != verify:
        set_verification(cluster, verify)
    tid = f"held-{run}"
    p = transactional_producer(cluster, tid, tid, proxied=True, conf=HELD_PRODUCER)
    try:
        p.init_transactions(30)
        h.epochs = (p.eos().producer_epoch, -1)
        proxy = Proxy.connect(cluster)
        mark = max((r["id"] for r in proxy.trace(client_id=tid)), default=0)
        with proxy.delay_request(hold_s, api="Produce", client_id=tid, topic=topic, partition=0, times=None):
            errors = _held_transaction(p, topic, hold_s)
            h.epochs = (h.epochs[0], p.eos().producer_epoch)
            time.sleep(hold_s)  # the held requests reach the leader from now on
            h.rows = _answered_rows(proxy, tid, mark)
        h.error = "; ".join(dict.fromkeys(errors))
        wait_settled(cluster, [tid])
        h.offsets = ins.partition_offsets(cluster, topic, 0)
        h.hanging = list(ins.find_hanging(cluster, topic, 0, max_transaction_timeout_min=0))
        for t in h.hanging:
            ins.abort_transaction(cluster, topic, 0, t.start_offset)
    finally:
        if not verification(cluster)[0]:
            set_verification(cluster, True)
    return _kept.keep(h, key, cluster.backend.name)
