"""``eoslab up``: the cluster and its fault proxy, started together.

The proxy daemon needs nothing from the brokers to start (it dials a broker when a client
connects), so it is spawned first and comes up while the six JVMs do, instead of adding its
own start (a Python process: ~1 s on a busy 2-core machine) after theirs. It sits above both
parts, like :mod:`eoslab._heal`.
"""

from __future__ import annotations

from eoslab.cluster import Cluster, PhaseHook
from eoslab.faults import start_proxy
from eoslab.topology import cold_start_before


def up(cluster: Cluster, timeout: float | None = None, on_phase: PhaseHook | None = None) -> int:
    """Start whatever is not running, the fault proxy included; wait until the cluster is ready and the
    proxy answers; return the proxy's pid. A failed cluster start stops the proxy this call started."""
    before = (
        cold_start_before()
    )  # the proxy after the cluster, as before issue 14 (`python -m tools.kitbench cluster`'s before)
    if before:
        cluster.up(timeout, on_phase)
    proxy = start_proxy(cluster)
    if not before:
        try:
            cluster.up(timeout, on_phase)
        except BaseException:
            proxy.abandon()
            raise
    pid = proxy.wait()
    if on_phase is not None:
        on_phase("proxy")
    return pid
