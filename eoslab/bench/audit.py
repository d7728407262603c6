"""A topic with known anomalies for the Spark audit of module 06: committed and aborted
transactions, and application-level duplicates (the same key committed twice), with the
counts a correct audit must find."""

from __future__ import annotations

import uuid

from eoslab._timeouts import CLIENT_CALL
from eoslab.clients import producer
from eoslab.cluster import Cluster
from eoslab.runs import AUDIT_ABORTED as ABORTED

COMMITTED = b"commit:"


def _value(outcome: bytes) -> bytes:
    return outcome.ljust(100, b"x")  # 100 bytes, as before the outcome was written into it


def write_audit_topic(
    cluster: Cluster,
    topic: str,
    *,
    transactions: int = 20,
    per_txn: int = 500,
    abort_every: int = 4,
    duplicates: int = 100,
) -> dict[str, int]:
    """Create ``topic`` and write ``transactions`` transactions of ``per_txn`` records keyed by their
    id; every ``abort_every``-th is aborted; then ``duplicates`` committed keys are written again,
    committed (a re-send by an application that is NOT exactly-once end to end).

    Each value starts with how its transaction ended, ``commit:`` or ``abort:`` (the writer's
    history, as Jepsen's checkers keep it), so an audit can count aborted records a reader saw.
    """
    cluster.admin.create_topic(topic, partitions=3)
    p = producer(
        cluster,
        {
            "transactional.id": f"eoslab-audit-{uuid.uuid4().hex[:8]}",  # transactions need an id
            "enable.idempotence": True,
        },
    )
    p.init_transactions(CLIENT_CALL)
    committed_keys: list[int] = []
    aborted = 0
    for t in range(transactions):
        p.begin_transaction()
        keys = range(t * per_txn, (t + 1) * per_txn)
        aborts = (t + 1) % abort_every == 0
        for k in keys:
            p.produce(topic, key=str(k).encode(), value=_value(ABORTED if aborts else COMMITTED))
        if aborts:
            # Flush first: the aborted records must reach the log (that is what read_uncommitted shows),
            # and librdkafka aborting with produce requests still in flight met INVALID_TXN_STATE here.
            p.flush(CLIENT_CALL)
            p.abort_transaction(CLIENT_CALL)
            aborted += per_txn
        else:
            p.commit_transaction(CLIENT_CALL)
            committed_keys.extend(keys)
    p.begin_transaction()
    for k in committed_keys[:duplicates]:
        p.produce(topic, key=str(k).encode(), value=_value(COMMITTED))
    p.commit_transaction(CLIENT_CALL)
    return {
        "committed": len(committed_keys) + duplicates,
        "aborted": aborted,
        "duplicates": duplicates,
        "distinct_committed_keys": len(committed_keys),
    }
