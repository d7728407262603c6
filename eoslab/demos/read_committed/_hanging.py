"""Late writes measured case by case, then a real hanging transaction found and ended with the tools.

Each case is one raw Produce (see :func:`~eoslab.demos.read_committed.late_produce`) in the
situation the module names; the table keeps what the leader answered, beside what one
would expect from reading KIP-890 and the broker source. Then KIP-890 part 1 is switched
off (a dynamic broker config), the same late write makes a transaction that no coordinator
will end, ``find-hanging`` finds it and ``abort`` ends it; with verification back on, the
same write is refused and nothing hangs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab.demos import _kept
from eoslab.demos._clients import TxnProducer, run_id, transactional_producer, wait_settled
from eoslab.demos.read_committed._late import late_produce, set_verification, verification, verification_off

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

LATE_CONF = {"linger.ms": 0}


@dataclass
class Hanging:
    """What the hanging-transaction demo saw, step by step."""

    topic: str
    partition: int
    cases: list[dict[str, Any]] = field(default_factory=list)
    offsets: list[dict[str, Any]] = field(default_factory=list)  # HW/LSO after each step
    found: list[ins.HangingTransaction] = field(default_factory=list)  # find-hanging, verification off
    found_after: list[ins.HangingTransaction] = field(default_factory=list)  # find-hanging, verification on
    aborted: str = ""  # the abort tool's own output

    def frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.cases)

    def offsets_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.offsets)


def _producer(cluster: Cluster, tid: str, client_id: str) -> TxnProducer:
    p = transactional_producer(cluster, tid, client_id, proxied=True, conf=LATE_CONF)
    p.init_transactions(30)
    return p


def _one_txn(cluster: Cluster, p: TxnProducer, topic: str, partition: int, value: str) -> None:
    p.begin_transaction()
    p.produce(topic, value.encode(), partition=partition)
    p.flush(30)
    p.commit_transaction(30)
    wait_settled(cluster, [p.transactional_id])


def _last_sequence(cluster: Cluster, topic: str, partition: int, producer_id: int) -> int:
    states = ins.describe_producers(cluster, topic, partition)
    return next(s.last_sequence for s in states if s.producer_id == producer_id)


class _Cases:
    def __init__(self, cluster: Cluster, h: Hanging, client_id: str) -> None:
        self.cluster, self.h, self.client_id = cluster, h, client_id

    def late(self, name: str, expected: str, p: TxnProducer, **kw: Any) -> dict[str, Any]:
        answer = late_produce(self.cluster, p, self.h.topic, self.h.partition, client_id=self.client_id, **kw)
        self.h.cases.append({"case": name, "expected (KIP-890, broker source)": expected, **answer})
        return answer

    def offsets(self, step: str) -> None:
        o = ins.partition_offsets(self.cluster, self.h.topic, self.h.partition)
        self.h.offsets.append({"step": step, "high_watermark": o.high_watermark, "last_stable_offset": o.last_stable})


def late_writes(
    cluster: Cluster, topic: str, partition: int = 0, run: str | None = None, *, reuse: bool = False
) -> Hanging:
    """Every case of the module, in order (a few JVM calls: describe-producers and the tools).

    ``reuse``: the last run kept under the runs folder, if there is one (:mod:`eoslab.demos._kept`)."""
    if reuse and (kept := _kept.last("late-writes", Hanging, cluster.backend.name)) is not None:
        return kept
    run = run or run_id()
    h = Hanging(topic, partition)
    c = _Cases(cluster, h, f"late-{run}")
    if not verification(cluster)[0]:
        set_verification(cluster, True)  # a lesson interrupted earlier left it off
    tid = f"late-{run}-p"
    p = _producer(cluster, tid, f"{tid}-1")
    _one_txn(cluster, p, topic, partition, "p#1")
    seq = _last_sequence(cluster, topic, partition, p.eos().producer_id)
    c.late("after commit: its next sequence", "INVALID_TXN_STATE (48)", p, sequence=seq + 1)
    p.begin_transaction()  # its next transaction writes the same partition
    p.produce(topic, b"p#2", partition=partition)
    p.flush(30)
    c.late(
        "during its next transaction: a copy of the previous batch",
        "NONE and the old offset (a duplicate)",
        p,
        sequence=seq,
    )
    c.late("during its next transaction: a sequence gap", "OUT_OF_ORDER_SEQUENCE_NUMBER (45)", p, sequence=seq + 5)
    p.commit_transaction(30)
    wait_settled(cluster, [p.transactional_id])
    old_epoch = p.eos().producer_epoch
    successor = _producer(cluster, tid, f"{tid}-2")  # the same transactional.id: p is fenced, the epoch bumped
    bumped = successor.eos().producer_epoch
    c.late(
        f"after the epoch was bumped ({old_epoch} → {bumped}) by a new instance",
        "INVALID_PRODUCER_EPOCH (47)",
        p,
        epoch=old_epoch,
        sequence=seq + 2,
    )
    # A real hanging transaction: verification off, a late write after a commit.
    rid = f"late-{run}-r"
    r = _producer(cluster, rid, rid)
    _one_txn(cluster, r, topic, partition, "r#1")
    c.offsets("before the late write")
    with verification_off(cluster):
        c.late("verification OFF, after commit: its next sequence", "NONE: appended (a hanging transaction)", r)
        c.offsets("after the late write (verification off)")
        time.sleep(0.05)  # find-hanging lists transactions older than the timeout: 0 min = any age > 0 ms
        h.found = list(ins.find_hanging(cluster, topic, partition, max_transaction_timeout_min=0))
        for t in h.found:
            h.aborted += ins.abort_transaction(cluster, topic, partition, t.start_offset)
        c.offsets("after kafka-transactions abort")
    c.late("verification ON again, after commit: its next sequence", "INVALID_TXN_STATE (48)", r)
    h.found_after = list(ins.find_hanging(cluster, topic, partition, max_transaction_timeout_min=0))
    c.offsets("after the same write with verification on")
    return _kept.keep(h, "late-writes", cluster.backend.name)
