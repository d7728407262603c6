"""Start, stop, break and heal the course's cluster, on either backend."""

from eoslab.cluster._admin import PartitionState, QuorumState
from eoslab.cluster._backend import Backend, NodeStatus
from eoslab.cluster._cluster import Cluster, connect, make_backend

__all__ = ["Backend", "Cluster", "NodeStatus", "PartitionState", "QuorumState", "connect", "make_backend"]
