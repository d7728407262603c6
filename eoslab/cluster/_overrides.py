"""Settings a node runs with on top of the topology's, kept beside its data until the cluster is restored.

Some broker settings are read only at start (``transactional.id.expiration.ms`` among them: Kafka 4.4's
``DynamicBrokerConfig`` reconfigures only ``producer.id.expiration.ms`` and
``transaction.partition.verification.enable`` among the transaction settings), so a lesson that needs another
value restarts one broker with it (:meth:`eoslab.cluster.Cluster.reconfigure`). Both backends record what a node
was started with in one JSON file per node; ``Cluster.restore`` (``eoslab heal``) starts it again without.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from eoslab.errors import ClusterError


def read(path: Path) -> dict[str, str]:
    """The settings recorded at ``path`` (empty when none are)."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def write(path: Path, properties: Mapping[str, str]) -> None:
    """Record ``properties`` at ``path``; an empty mapping removes the record."""
    if not properties:
        path.unlink(missing_ok=True)
        return
    for key in properties:
        if not key or "=" in key or any(ch.isspace() for ch in key):
            raise ClusterError(
                f"{key!r} is not a Kafka setting's name: give names like 'transactional.id.expiration.ms'."
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(properties), indent=1, sort_keys=True) + "\n")
