"""ONE conformance test that both backends pass: the same node operations, the same answers.

The local backend runs here always; the docker backend runs where a Docker engine answers
(six containers through testcontainers' DockerCompose, on ports +500, beside the local cluster:
``docker_cluster`` in tests/conftest.py) and is skipped with the reason otherwise.
"""

from __future__ import annotations

import uuid

import pytest

import eoslab
from eoslab import clients
from eoslab.faults import Proxy
from tests.integration._produce import produce_all


@pytest.fixture(params=["local", pytest.param("docker", marks=pytest.mark.docker)])
def any_cluster(request):
    c = request.getfixturevalue("cluster" if request.param == "local" else "docker_cluster")
    eoslab.heal(c)
    yield c
    eoslab.heal(c)


@pytest.mark.cluster
@pytest.mark.destructive
def test_backend_conformance(any_cluster):
    c = any_cluster
    assert [s.state for s in c.status()] == ["running"] * 6
    assert c.quorum().voters == (101, 102, 103)
    assert c.brokers() == [1, 2, 3]
    assert c.leader("demo", 0) == 1 and c.leader("demo", 1) == 2
    assert [len(p.replicas) for p in c.partitions("demo")] == [3, 3]
    assert c.admin.topic_config("demo")["min.insync.replicas"] == "2"

    # A Kafka CLI tool of the pinned release, run where the backend runs its tools.
    out = c.tool("metadata-quorum", "--bootstrap-server", "{bootstrap}", "describe", "--status")
    assert "CurrentVoters" in out and "LeaderId" in out

    # The fault proxy in front of this cluster: a write through it is traced, and it lands.
    proxy = Proxy.connect(c)
    assert proxy.health()["port_offset"] == c.topology.port_offset
    client_id = f"conformance-{uuid.uuid4().hex[:8]}"
    p = clients.producer(c, {"client.id": client_id}, proxied=True)
    produce_all(p, "demo", [client_id.encode()], partition=0)
    produced = proxy.trace(client_id=client_id, api="Produce").frame()
    assert list(produced.broker) == [1] and list(produced.error) == ["NONE"]

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
