"""Which broker coordinates a transactional id or a group, predicted and asked.

Kafka maps a key to a partition of an internal topic and makes that
partition's leader the coordinator (KIP-98 for ``__transaction_state``; the
same rule for ``__consumer_offsets``)::

    partition = Utils.abs(key.hashCode()) % 50

``String.hashCode`` runs over UTF-16 code units (``h = 31*h + u``, signed
32-bit overflow), and ``Utils.abs`` maps ``Integer.MIN_VALUE`` to 0 where
``Math.abs`` would leave it negative (checked in the bytecode of
``org.apache.kafka.common.utils.Utils.abs(int)`` in kafka-clients 4.1.2 and 4.4.0).
"polygenelubricants" hashes to ``Integer.MIN_VALUE``: partition 0, where a
naive Python ``abs(h) % 50`` gives 48.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import eoslab.cluster  # find_coordinators looked up at call time: a test counts the round trips
from eoslab.errors import ClusterError
from eoslab.inspect._table import Rows
from eoslab.topology import OFFSETS_PARTITIONS, TXN_STATE_PARTITIONS

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

Kind = Literal["transaction", "group"]

_INT_MIN = -(2**31)
_TOPIC = {"transaction": "__transaction_state", "group": "__consumer_offsets"}
_PARTITIONS = {"transaction": TXN_STATE_PARTITIONS, "group": OFFSETS_PARTITIONS}
_KEY_TYPE = {"group": 0, "transaction": 1}  # FindCoordinator's KeyType

# Kafka error codes a FindCoordinator key can come back with, by name for the message.
_FIND_ERRORS = {14: "COORDINATOR_LOAD_IN_PROGRESS", 15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR"}


def java_string_hash(s: str) -> int:
    """Java's ``String.hashCode``: over UTF-16 code units, so a character beyond U+FFFF counts twice."""
    data = s.encode("utf-16-le", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: like ``Math.abs`` but ``Integer.MIN_VALUE`` -> 0."""
    return 0 if n == _INT_MIN else abs(n)


def coordinator_partition(key: str, partitions: int = TXN_STATE_PARTITIONS) -> int:
    """The internal-topic partition that holds ``key``'s state (``Utils.abs(key.hashCode()) % partitions``)."""
    return kafka_abs(java_string_hash(key)) % partitions


@dataclass(frozen=True)
class Coordinator:
    """One key's coordinator: predicted from the hash and the metadata, and as the cluster reports it."""

    key: str
    kind: str
    partition: int
    predicted: int  # leader of that partition of the internal topic (-1: none)
    reported: int | None  # FindCoordinator's NodeId (None when not asked, -1 on error)
    error: str | None = None

    @property
    def agrees(self) -> bool:
        return self.reported is not None and self.reported == self.predicted

    FRAME_EXTRAS = ("agrees",)


def predict_coordinators(cluster: Cluster, keys: list[str], kind: Kind = "transaction") -> Rows[Coordinator]:
    """Hash each key and read the leader of its partition from ONE metadata request."""
    topic = _topic(kind)
    leaders = {p.partition: p.leader for p in cluster.partitions(topic)}
    n = _PARTITIONS[kind]
    if len(leaders) != n:
        raise ClusterError(f"{topic} has {len(leaders)} partitions, not {n}: was the topology changed?")
    rows = []
    for k in keys:
        part = coordinator_partition(k, n)
        rows.append(Coordinator(k, kind, part, leaders[part], None))
    return Rows(rows, Coordinator)


def coordinators(cluster: Cluster, keys: list[str], kind: Kind = "transaction", broker: int = 1) -> Rows[Coordinator]:
    """Predicted and reported coordinators of ``keys``.

    The report is ONE batched FindCoordinator v4 request (KIP-699) to
    ``broker``: unlike ``init_transactions()`` it allocates no producer id.
    """
    predicted = predict_coordinators(cluster, keys, kind)
    answers = eoslab.cluster.find_coordinators(
        cluster.topology.broker(broker), _KEY_TYPE[kind], list(dict.fromkeys(keys))
    )
    rows = []
    for c in predicted:
        code, node = answers.get(c.key, (-1, -1))
        err = None if code == 0 else _FIND_ERRORS.get(code, f"error {code}")
        rows.append(Coordinator(c.key, c.kind, c.partition, c.predicted, node if code == 0 else -1, err))
    return Rows(rows, Coordinator)


def coordinator(cluster: Cluster, key: str, kind: Kind = "transaction") -> Coordinator:
    """One key, predicted and asked."""
    return coordinators(cluster, [key], kind)[0]


def _topic(kind: str) -> str:
    if kind not in _TOPIC:
        raise ClusterError(
            f"Unknown coordinator kind {kind!r}: use 'transaction' (transactional ids) or 'group' (consumer group ids)."
        )
    return _TOPIC[kind]
