"""The cluster as a learner looks at it: a table and a Mermaid diagram of what is, now."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster._cluster import Cluster


def status_frame(cluster: Cluster) -> pd.DataFrame:
    """One row per node: role, id, state, pid, RSS, and who leads the quorum."""
    import pandas as pd

    try:
        leader = cluster.quorum(timeout=2.0).leader_id
    except Exception:  # noqa: BLE001 - a down quorum is shown as "no leader", not raised
        leader = -1
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
    """A Mermaid flowchart of the cluster as it is: nodes, states, the quorum leader, leaders of ``topic``."""
    from eoslab.topology import DEMO_TOPIC

    topic = topic or DEMO_TOPIC
    status = {s.name: s for s in cluster.status()}
    try:
        q_leader = cluster.quorum(timeout=2.0).leader_id
    except Exception:  # noqa: BLE001
        q_leader = -1
    lines = ["flowchart TB", '  subgraph Q["KRaft quorum (__cluster_metadata)"]']
    for c in cluster.topology.controllers:
        star = " ★ leader" if c.node_id == q_leader else ""
        lines.append(f'    {c.name.replace("-", "")}["{c.name}<br/>id {c.node_id}<br/>{status[c.name].state}{star}"]')
    lines.append("  end")
    parts = []
    try:
        parts = cluster.partitions(topic)
    except Exception:  # noqa: BLE001
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
