"""The cluster as a learner looks at it, now: its nodes as a table, as a Mermaid diagram, and the
files of one partition replica on disk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from eoslab._timeouts import PROBE
from eoslab.inspect._batches import broker_node
from eoslab.topology import DEMO_TOPIC

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster


def _quorum_leader(cluster: Cluster) -> int:
    try:
        return cluster.quorum(timeout=PROBE).leader_id
    except Exception:  # noqa: BLE001 - a down quorum is shown as "no leader", not raised
        return -1


def status_frame(cluster: Cluster) -> pd.DataFrame:
    """One row per node: role, id, state, pid, RSS, and who leads the quorum."""
    import pandas as pd

    leader = _quorum_leader(cluster)
    rows = [
        {
            "node": s.name,
            "role": s.role,
            "node.id": s.node_id,
            "state": s.state,
            "pid": s.pid,
            "rss MB": round(s.rss_mb) if s.rss_mb else None,
            "quorum leader": s.node_id == leader,
            "ports": ", ".join(map(str, s.ports)),
        }
        for s in cluster.status()
    ]
    return pd.DataFrame(rows).set_index("node")


def cluster_mermaid(cluster: Cluster, topic: str | None = None) -> str:
    """A Mermaid flowchart of the cluster as it is: nodes, states, the quorum leader, leaders of ``topic``
    (the demo topic by default). Show it with :func:`eoslab.show_mermaid`."""
    topic = topic or DEMO_TOPIC
    status = {s.name: s for s in cluster.status()}
    q_leader = _quorum_leader(cluster)
    lines = ["flowchart TB", '  subgraph Q["KRaft quorum (__cluster_metadata)"]']
    for c in cluster.topology.controllers:
        star = " ★ leader" if c.node_id == q_leader else ""
        lines.append(f'    {c.name.replace("-", "")}["{c.name}<br/>id {c.node_id}<br/>{status[c.name].state}{star}"]')
    lines.append("  end")
    parts = []
    try:
        parts = cluster.partitions(topic)
    except Exception:  # noqa: BLE001 - no leaders to draw while the topic is unknown or the brokers are down
        pass
    lines.append('  subgraph B["Brokers"]')
    for b in cluster.topology.brokers:
        led = [f"{topic}-{p.partition} leader" for p in parts if p.leader == b.node_id]
        extra = "<br/>" + "<br/>".join(led) if led else ""
        lines.append(f'    {b.name.replace("-", "")}["Broker {b.node_id}<br/>{status[b.name].state}{extra}"]')
    lines.append("  end")
    lines.append("  Q -- metadata --> B")
    for name, s in status.items():
        if s.state != "running":
            lines.append(f"  style {name.replace('-', '')} fill:#fdd,stroke:#c00")
    return "\n".join(lines)


def partition_folder(cluster: Cluster, topic: str, partition: int, broker: int | str | None = None) -> pd.DataFrame:
    """The files of one partition replica on one broker (``None``: the leader): file, bytes."""
    import pandas as pd

    node = broker_node(cluster, broker, topic, partition)
    rows = cluster.backend.list_files(node, f"{topic}-{partition}")
    return pd.DataFrame(rows, columns=["file", "bytes"])
