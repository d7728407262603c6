"""What a learner's cluster looks like from outside, before and after the suite: it must not change.

`make test` (tests/suite.py) takes :func:`snapshot` of the learner's cluster (the one at the learner's offset, on
either backend, with the learner's data folder) before its first tier and after its last, and fails the run when
:func:`changes` finds any: a node stopped, killed, paused or restarted (its pid), a topic gone or added, a
partition folder gone from ``kafka-data/``. tests/integration/test_beside_a_learner.py proves it on a stand-in
learner's cluster, with the topics it added and their end offsets too, which a learner at work may change.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from eoslab.topology import Topology


@dataclass(frozen=True)
class Snapshot:
    """A learner's cluster: its running nodes (name -> (state, pid)), topics, and partition folders on disk."""

    backend: str
    nodes: dict[str, tuple[str, int | None]] = field(default_factory=dict)
    topics: frozenset[str] = frozenset()
    folders: frozenset[str] = frozenset()

    @property
    def running(self) -> bool:
        return bool(self.nodes)


def _docker_project_exists(topo: Topology) -> bool:
    from eoslab._compose import compose_project

    label = f"label=com.docker.compose.project={compose_project(topo)}"
    try:
        out = subprocess.run(["docker", "ps", "-q", "--filter", label], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return bool(out.stdout.split())


def _backend(topo: Topology, data: Path) -> tuple[str, object] | None:
    """The backend of the learner's running cluster at ``topo`` (local first: its pid files), or None."""
    from eoslab.cluster import DockerBackend, LocalBackend

    local = LocalBackend(topo, root=data)
    if any(row.state != "stopped" for row in local.status()):
        return "local", local
    if _docker_project_exists(topo):
        return "docker", DockerBackend(topo)
    return None


def _topics(bootstrap: str) -> frozenset[str]:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "socket.timeout.ms": 10000})
    return frozenset(t for t in admin.list_topics(timeout=15).topics if not t.startswith("__"))


def _folders(data: Path) -> frozenset[str]:
    """``broker-N/<topic>-<partition>`` for every partition folder under the data folder."""
    found = set()
    for node in data.glob("broker-*"):
        found |= {f"{node.name}/{p.name}" for p in (node / "data").glob("*-*") if p.is_dir()}
    return frozenset(found)


def snapshot(offset: int, data: Path) -> Snapshot | None:
    """The learner's cluster at ``offset`` with its data in ``data``; None when none runs there."""
    found = _backend(Topology(port_offset=offset), data)
    if found is None:
        return None
    name, backend = found
    rows = backend.status()  # type: ignore[attr-defined]
    nodes = {r.name: (r.state, r.pid) for r in rows if r.state != "stopped"}
    topo = Topology(port_offset=offset)
    live = [b for b in topo.brokers if nodes.get(b.name, ("", None))[0] == "running"]
    topics = _topics(",".join(f"127.0.0.1:{b.client_port}" for b in live)) if live else frozenset()
    return Snapshot(name, nodes, topics, _folders(data) if name == "local" else frozenset())


def changes(before: Snapshot, after: Snapshot | None, *, added: bool = True) -> list[str]:
    """What differs, one phrase each; empty when the cluster is as it was. ``added=False`` leaves out topics that
    appeared: a learner at work beside `make test` creates their own."""
    if after is None:
        return [f"the {before.backend} cluster no longer runs"]
    out = []
    for node, (state, pid) in before.nodes.items():
        now = after.nodes.get(node)
        if now is None:
            out.append(f"{node} stopped")
        elif now != (state, pid):
            out.append(f"{node} was {state} (pid {pid}), is {now[0]} (pid {now[1]})")
    if gone := before.topics - after.topics:
        out.append(f"topics gone: {', '.join(sorted(gone))}")
    if added and (new := after.topics - before.topics):
        out.append(f"topics added: {', '.join(sorted(new))}")
    if lost := before.folders - after.folders:
        out.append(f"partition folders gone: {', '.join(sorted(lost))}")
    return out
