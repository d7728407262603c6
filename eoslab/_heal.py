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
from eoslab._wait import wait_until
from eoslab.cluster import Cluster
from eoslab.faults import clear_faults
from eoslab.java_client import end_java_producers

CONFIG_WAIT = 15.0  # a broker config change reaches every broker through the metadata log in ~1 s
LESSON_BROKER_CONFIGS = ("transaction.partition.verification.enable",)
"""Dynamic broker configs a lesson may change for a moment (module 04 turns KIP-890's verification off)."""


def _dynamic(cluster: Cluster, broker: int) -> list[str]:
    """The :data:`LESSON_BROKER_CONFIGS` that ``broker`` reports as dynamic per-broker overrides."""
    from confluent_kafka.admin import ConfigResource, ConfigSource, ResourceType

    res = ConfigResource(ResourceType.BROKER, str(broker))
    entries = cluster.admin.client.describe_configs([res], request_timeout=10)[res].result(11)
    return [
        n
        for n in LESSON_BROKER_CONFIGS
        if n in entries and ConfigSource(entries[n].source) == ConfigSource.DYNAMIC_BROKER_CONFIG
    ]


def restore_broker_configs(cluster: Cluster, timeout: float = CONFIG_WAIT) -> list[str]:
    """Delete the dynamic per-broker overrides of :data:`LESSON_BROKER_CONFIGS` a lesson left (interrupted
    between its change and its undo), and wait until every broker reports the default again; what was
    restored, as ``"<broker>: <name>"``."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    restored = []
    for b in cluster.topology.brokers:
        names = _dynamic(cluster, b.node_id)
        if not names:
            continue
        delete = [ConfigEntry(n, "", incremental_operation=AlterConfigOpType.DELETE) for n in names]
        undo = ConfigResource(ResourceType.BROKER, str(b.node_id), incremental_configs=delete)
        cluster.admin.client.incremental_alter_configs([undo], request_timeout=10)[undo].result(11)
        restored += [f"{b.node_id}: {n}" for n in names]
    if restored:
        wait_until(
            lambda: not any(_dynamic(cluster, b.node_id) for b in cluster.topology.brokers),
            timeout=timeout,
            what=f"every broker to drop the dynamic overrides {restored}",
        )
    return restored


def heal(cluster: Cluster, timeout: float = HEAL) -> None:
    """Undo every fault: the proxy forwards everything again and zombie producers (and the Java
    producers' child JVMs a lesson left) are ended (a proxy that is not running is not started here),
    then every node runs, every ISR is complete, leaders are back on their preferred replicas and the
    demo topic is arranged as the course draws it, and broker configs a lesson changed are back to default."""
    clear_faults(cluster.topology)
    end_java_producers()
    cluster.restore(timeout)
    restore_broker_configs(cluster)
