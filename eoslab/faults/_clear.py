"""Every fault this package can inject, undone: the proxy's rules and the zombie producers."""

from __future__ import annotations

from eoslab.faults._control_client import ControlClient, HasTopology, health, topology_of
from eoslab.faults._zombie import end_zombies
from eoslab.topology import Topology


def clear_faults(target: Topology | HasTopology | None = None) -> int:
    """Heal every proxy rule if the daemon runs (it is not started here) and end every zombie producer;
    the number of rules removed. :func:`eoslab.heal` calls this before it heals the nodes."""
    end_zombies()
    topology = topology_of(target)
    if health(topology) is None:
        return 0
    return int(ControlClient(topology).call("DELETE", "/rules")["removed"])
