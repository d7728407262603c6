"""Mistake 9's cluster side: a coordinator that forgets an idle transactional id in seconds, and the wait for it.

A coordinator removes a transactional id whose last transaction ended more than ``transactional.id.expiration.ms``
ago (7 days by default), at its next check, every ``transaction.remove.expired.transaction.cleanup.interval.ms``
(one hour): ``TransactionStateManager`` in Kafka's ``core``, since KIP-98. Both settings are read only when a
broker starts (``DynamicBrokerConfig`` of Kafka 4.4 reconfigures neither), so the lesson restarts the one broker
that coordinates its ids with short values (:meth:`eoslab.cluster.Cluster.reconfigure`), and ``eoslab.heal``
restarts it with the defaults.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from eoslab import inspect as ins
from eoslab._timeouts import NEW_LEADER
from eoslab._wait import wait_until
from eoslab.demos import coordinator_state
from eoslab.errors import ClusterError

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

EXPIRATION_MS = 10_000
CLEANUP_INTERVAL_MS = 1_000
SHORT_EXPIRY = {
    "transactional.id.expiration.ms": str(EXPIRATION_MS),
    "transaction.remove.expired.transaction.cleanup.interval.ms": str(CLEANUP_INTERVAL_MS),
}
"""An id idle for 10 s is forgotten within the next second (the defaults: 7 days, checked hourly)."""

FORGET_SLACK = 30.0
"""s past expiry + one check: the removal is a replicated write to ``__transaction_state`` (acks=all), milliseconds
on a quiet machine (measured on 2 cores: forgotten 10.4-11.4 s after the last commit, 4 runs); a busy laptop's is
seconds."""


def shorten_expiry(cluster: Cluster, transactional_id: str) -> int:
    """Restart the broker that coordinates ``transactional_id`` with :data:`SHORT_EXPIRY`; its node id.

    The ids of a lesson that hash to the same ``__transaction_state`` partition share this coordinator (module 03).
    Raises ClusterError (no coordinator now), WaitTimeout (the restarted broker does not coordinate it again).
    """
    broker = ins.coordinator(cluster, transactional_id).predicted
    if broker < 0:
        raise ClusterError(f"No broker coordinates {transactional_id!r} now: run eoslab.heal(cluster), then again.")
    cluster.reconfigure(cluster.topology.broker(broker), SHORT_EXPIRY)
    # The election is the controller's; every broker learns the new leader from the metadata log a moment later,
    # and the new coordinator loads the partition: FindCoordinator names it once both are done.
    wait_until(
        lambda: ins.coordinator(cluster, transactional_id).reported == broker,
        timeout=NEW_LEADER,
        interval=0.2,
        what=f"broker-{broker} to coordinate {transactional_id!r} again after its restart",
        hint="Run eoslab.heal(cluster), then this cell again.",
        progress=False,
    )
    return broker


def wait_forgotten(cluster: Cluster, transactional_ids: list[str], since: float | None = None) -> float:
    """Wait until the coordinator answers TRANSACTIONAL_ID_NOT_FOUND for every id (DescribeTransactions).

    ``since``: ``time.monotonic()`` of the ids' last transaction; returns the seconds from it (or from the call).
    Raises WaitTimeout after expiry + one check + :data:`FORGET_SLACK`.
    """
    t0 = time.monotonic() if since is None else since
    bound = (EXPIRATION_MS + CLEANUP_INTERVAL_MS) / 1000 + FORGET_SLACK
    wait_until(
        lambda: all(coordinator_state(cluster, t) == "Unknown" for t in transactional_ids),
        timeout=max(1.0, t0 + bound - time.monotonic()),
        interval=0.5,
        what=f"the coordinator to forget {transactional_ids} (idle {EXPIRATION_MS // 1000} s)",
        hint="Was its broker restarted with the short expiry (shorten_expiry) and not healed since?",
        progress=False,
    )
    return time.monotonic() - t0
