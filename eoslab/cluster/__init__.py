"""Start, stop, break and heal the course's cluster, on either backend."""

from eoslab.cluster._admin import PartitionState, QuorumState
from eoslab.cluster._backend import Backend, NodeStatus
from eoslab.cluster._cluster import Cluster, connect, make_backend
from eoslab.cluster._docker import DockerBackend, compose_file, docker_available

__all__ = [
    "Backend",
    "Cluster",
    "DockerBackend",
    "NodeStatus",
    "PartitionState",
    "QuorumState",
    "compose_file",
    "connect",
    "docker_available",
    "make_backend",
]
