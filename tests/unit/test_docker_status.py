"""The docker backend's view of its containers (eoslab/cluster/_docker.py ``_containers``): ONE `docker inspect` of
the names the compose file gives them, not `docker compose ps` and a second `docker inspect` (a heal asks five
times: 0.45 s of CLI CPU a heal against 0.08 s, session 15). `docker inspect` prints the containers that exist and
exits 1 when some do not: those are stopped, the others read as they are."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from eoslab.cluster import DockerBackend
from eoslab.topology import Topology


def _container(name: str, status: str, pid: int, exit_code: int = 0) -> dict[str, Any]:
    return {
        "Id": f"{abs(hash(name)):064x}"[:64],
        "Name": f"/{name}",
        "State": {"Status": status, "Pid": pid, "ExitCode": exit_code},
    }


def test_one_inspect_of_the_compose_names_gives_every_nodes_state_and_pid(monkeypatch) -> None:
    backend = DockerBackend(Topology(port_offset=500), compose_cmd=["docker", "compose"], image="x")
    calls: list[list[str]] = []
    found = [
        _container("eoslab-500-controller-1", "running", 11),
        _container("eoslab-500-broker-1", "paused", 12),
        _container("eoslab-500-broker-2", "exited", 0, exit_code=137),
        _container("someone-else", "running", 13),  # not one of this cluster's names: ignored
    ]

    def run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 1, json.dumps(found), "Error: No such object: eoslab-500-broker-3")

    monkeypatch.setattr(backend, "_run", run)
    status = {s.name: (s.state, s.pid) for s in backend.status()}
    assert calls == [["docker", "inspect", *(f"eoslab-500-{n.name}" for n in backend.topology.nodes)]]
    assert status == {
        "controller-1": ("running", 11),
        "controller-2": ("stopped", None),
        "controller-3": ("stopped", None),
        "broker-1": ("paused", 12),
        "broker-2": ("stopped", None),
        "broker-3": ("stopped", None),
    }
    node = next(n for n in backend.topology.nodes if n.name == "broker-2")
    monkeypatch.setattr(backend, "logs", lambda _node, _lines: "")
    assert backend.died_during_start(node) == "exited with code 137"


def test_no_container_at_all_reads_as_every_node_stopped(monkeypatch) -> None:
    backend = DockerBackend(Topology(port_offset=500), compose_cmd=["docker", "compose"], image="x")
    monkeypatch.setattr(backend, "_run", lambda argv, timeout: subprocess.CompletedProcess(argv, 1, "[]", "Error"))
    assert {s.state for s in backend.status()} == {"stopped"}
