"""Heal: whatever a lesson broke, put the cluster back as the next lesson expects.

Every notebook calls it first and the test suite calls it before each notebook,
so a lesson that kills brokers never leaks into the next one (Jepsen's "final
generator" that heals every nemesis). It sits above both kinds of fault it
undoes: those of the fault proxy (:mod:`eoslab.faults`) and those of the nodes
(:mod:`eoslab.cluster`)::

    import eoslab
    cluster = eoslab.connect()
    eoslab.heal(cluster)
"""

from __future__ import annotations

from eoslab._timeouts import HEAL
from eoslab.cluster import Cluster
from eoslab.faults import clear_faults
from eoslab.java_client import end_java_producers


def heal(cluster: Cluster, timeout: float = HEAL) -> None:
    """Undo every fault: the proxy forwards everything again and zombie producers (and the Java
    producers' child JVMs a lesson left) are ended (a proxy that is not running is not started here),
    then every node runs, every ISR is complete, leaders are back on their preferred replicas and the
    demo topic is arranged as the course draws it."""
    clear_faults(cluster.topology)
    end_java_producers()
    cluster.restore(timeout)
