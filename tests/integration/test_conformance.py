"""ONE conformance test that both backends pass: the same node operations, the same answers.

The local backend runs here always; the docker backend runs where a Docker engine
answers (through testcontainers' DockerCompose) and is skipped with the reason otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import eoslab
from eoslab.cluster import Cluster, DockerBackend, docker_available

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["local", "docker"])
def any_cluster(request):
    if request.param == "local":
        c = request.getfixturevalue("cluster")
        eoslab.heal(c)
        yield c
        eoslab.heal(c)
        return
    why = docker_available()
    if why is not None:
        pytest.skip(f"docker backend not tested here: {why}")
    from testcontainers.compose import DockerCompose

    compose = DockerCompose(ROOT, compose_file_name="docker-compose.yml", pull=True, wait=True)
    c = Cluster(DockerBackend.from_testcontainers(compose))
    with c:  # up() on enter (torn down if the start fails), down() on exit
        yield c


@pytest.mark.cluster
@pytest.mark.destructive
def test_backend_conformance(any_cluster):
    c = any_cluster
    assert [s.state for s in c.status()] == ["running"] * 6
    assert c.quorum().voters == (101, 102, 103)
    assert c.brokers() == [1, 2, 3]
    assert c.leader("demo", 0) == 1 and c.leader("demo", 1) == 2

    # A Kafka CLI tool of the pinned release, run where the backend runs its tools.
    out = c.tool("metadata-quorum", "--bootstrap-server", "{bootstrap}", "describe", "--status")
    assert "CurrentVoters" in out and "LeaderId" in out

    c.kill("broker-2")
    assert {s.name: s.state for s in c.status()}["broker-2"] == "stopped"
    assert c.wait_for_new_leader("demo", 1, 2) in (1, 3)
    c.start("broker-2")
    assert {s.name: s.state for s in c.status()}["broker-2"] == "running"

    c.pause("broker-3")
    assert {s.name: s.state for s in c.status()}["broker-3"] == "paused"
    c.resume("broker-3")
    assert {s.name: s.state for s in c.status()}["broker-3"] == "running"

    assert c.logs("controller-1", 20).strip()
    eoslab.heal(c)
    assert c.leader("demo", 1) == 2
