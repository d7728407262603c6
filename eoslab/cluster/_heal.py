"""Heal: whatever a lesson broke, put the cluster back as the next lesson expects.

Every notebook calls it first and the test suite calls it before each notebook,
so a lesson that kills brokers never leaks into the next one (Jepsen's "final
generator" that heals every nemesis).
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

from eoslab._paths import clients_dir
from eoslab.cluster._seed import ensure_seed

if TYPE_CHECKING:
    from eoslab.cluster._cluster import Cluster


def end_child_clients() -> list[int]:
    """End the producer processes a demo started (and maybe left SIGSTOPped)."""
    ended = []
    folder = clients_dir()
    for pid_file in folder.glob("*.pid"):
        try:
            pid = int(pid_file.read_text().strip())
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGKILL)
            ended.append(pid)
        except (ValueError, ProcessLookupError, PermissionError):
            pass
        pid_file.unlink(missing_ok=True)
    return ended


def heal(cluster: Cluster, timeout: float = 120.0) -> None:
    """Heal every proxy fault, start or resume every node, end demo clients, wait for full ISRs, restore leaders."""
    from eoslab.faults import clear_faults  # late: faults sits above cluster in the layering

    clear_faults(cluster.topology)  # a running proxy forwards everything again (it is not started here)
    end_child_clients()
    for status in cluster.status():
        node = cluster.topology.node(status.name)
        if status.state == "paused":
            cluster.backend.resume(node)
    cluster.backend.up()  # starts whatever is stopped; a no-op for running nodes
    cluster.wait_ready(timeout)
    cluster.wait_full_isr(timeout)
    cluster.admin.elect_preferred_leaders()
    ensure_seed(cluster)  # recreates the demo topic if a lesson deleted it, then checks leaders
