"""Start, stop and break the course's cluster, on either backend, and ask Kafka what it knows.

A node fault (kill, stop, pause) is undone by :meth:`Cluster.restore`; :func:`eoslab.heal`
undoes it together with the fault proxy's faults.
"""

from eoslab.cluster._admin import Admin, PartitionState, QuorumState, find_coordinators
from eoslab.cluster._backend import TOOLS, Backend, NodeStatus, Tool
from eoslab.cluster._cluster import Cluster, connect, make_backend
from eoslab.cluster._docker import DockerBackend, compose_file, docker_available
from eoslab.cluster._local import LocalBackend
from eoslab.cluster._startup import PHASES, NodeStart, PhaseHook, StartMarks, node_start
from eoslab.errors import KafkaToolError

__all__ = [
    "Admin",
    "Backend",
    "Cluster",
    "DockerBackend",
    "KafkaToolError",
    "LocalBackend",
    "NodeStart",
    "NodeStatus",
    "PHASES",
    "PartitionState",
    "PhaseHook",
    "QuorumState",
    "StartMarks",
    "TOOLS",
    "Tool",
    "compose_file",
    "connect",
    "docker_available",
    "find_coordinators",
    "make_backend",
    "node_start",
]
