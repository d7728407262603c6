"""eoslab: Kafka's exactly-once semantics, taught on a real 3-controller + 3-broker cluster.

>>> import eoslab
>>> cluster = eoslab.connect()      # the running cluster, or start one
>>> cluster.heal()                  # every notebook starts here
>>> cluster.bootstrap_servers()
'127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093'
"""

from eoslab._display import show_mermaid
from eoslab.cluster import Cluster, NodeStatus, PartitionState, QuorumState, connect
from eoslab.errors import (
    ClusterNotRunning,
    ClusterStartError,
    DataDirError,
    EoslabError,
    PortInUseError,
    SetupError,
    UnknownNodeError,
    WaitTimeout,
)
from eoslab.topology import DEMO_TOPIC, KAFKA_VERSION, TOPOLOGY, Topology

__version__ = "0.1.0"

__all__ = [
    "Cluster",
    "ClusterNotRunning",
    "ClusterStartError",
    "DEMO_TOPIC",
    "DataDirError",
    "EoslabError",
    "KAFKA_VERSION",
    "NodeStatus",
    "PartitionState",
    "PortInUseError",
    "QuorumState",
    "SetupError",
    "TOPOLOGY",
    "Topology",
    "UnknownNodeError",
    "WaitTimeout",
    "connect",
    "show_mermaid",
]
