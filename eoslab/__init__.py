"""eoslab: Kafka's exactly-once semantics, taught on a real 3-controller + 3-broker cluster.

>>> import eoslab
>>> cluster = eoslab.connect()      # the running cluster, or start one
>>> eoslab.heal(cluster)            # every notebook starts here
>>> cluster.bootstrap_servers()
'127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093'

The package's face: the names a notebook needs first. Everything else lives in
its part (``eoslab.inspect``, ``eoslab.faults`` ...); docs/architecture.md maps them.
"""

from eoslab._display import code_of, show_code, show_mermaid
from eoslab._heal import heal
from eoslab._version import __version__
from eoslab.cluster import Cluster, NodeStatus, PartitionState, QuorumState, connect
from eoslab.errors import (
    ClientError,
    ClusterError,
    ClusterNotRunning,
    ClusterStartError,
    DataDirError,
    DataError,
    EoslabError,
    GradingError,
    PortInUseError,
    SetupError,
    UnknownNodeError,
    WaitTimeout,
)
from eoslab.topology import DEMO_TOPIC, KAFKA_VERSION, TOPOLOGY, Topology

__all__ = [
    "ClientError",
    "Cluster",
    "ClusterError",
    "ClusterNotRunning",
    "ClusterStartError",
    "DEMO_TOPIC",
    "DataDirError",
    "DataError",
    "EoslabError",
    "GradingError",
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
    "__version__",
    "code_of",
    "connect",
    "heal",
    "show_code",
    "show_mermaid",
]
