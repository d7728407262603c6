"""The Kafka image's contract inside the running containers of the session's docker cluster.

The rest of the contract needs only the image (tests/integration/test_docker_image.py); these three need the
containers of ``docker_cluster`` (tests/conftest.py), one per session: that is why they are a file of their
own, which runs on xdist worker gw0 (conftest.py's PINNED), while the image-only tests run on whichever
worker is free.
"""

from __future__ import annotations

import subprocess

import pytest
from test_docker_image import properties

import eoslab
from eoslab._compose import CONTAINER_DATA_DIR, compose_project
from eoslab._wait import wait_until
from eoslab.cluster import TOOLS
from eoslab.topology import JVM_HEAP

pytestmark = pytest.mark.docker


def test_nodes_run_as_appuser_with_their_roles_heap_and_log_through_log4j2(docker_cluster):
    topo = docker_cluster.topology
    for node in topo.nodes:
        name = f"{compose_project(topo)}-{node.name}"
        cmdline = subprocess.run(
            ["docker", "exec", name, "cat", "/proc/1/cmdline"], capture_output=True, timeout=60
        ).stdout.split(b"\0")
        args = [a.decode() for a in cmdline if a]
        assert args[0].endswith("java") and "kafka.Kafka" in args, args  # the node IS the container's process 1
        assert JVM_HEAP[node.role].split() == [a for a in args if a.startswith(("-Xms", "-Xmx"))]
        user = subprocess.run(["docker", "exec", name, "id", "-un"], capture_output=True, text=True, timeout=60)
        assert user.stdout.strip() == "appuser"
        log = subprocess.run(["docker", "logs", name], capture_output=True, text=True, timeout=60)
        assert "Kafka Server started (kafka.server.KafkaRaftServer)" in log.stdout, log.stdout[-2000:]


@pytest.mark.destructive
def test_storage_is_formatted_on_every_start_and_a_second_start_keeps_the_data(docker_cluster):
    c = docker_cluster
    node = c.node("controller-3")
    name = f"{compose_project(c.topology)}-{node.name}"
    c.stop(node)
    c.start(node)

    def log() -> str:
        return subprocess.run(["docker", "logs", name], capture_output=True, text=True, timeout=60).stdout

    # A restarted controller is not waited for by heal (the voter set is static): wait for its second start.
    wait_until(lambda: log().count("Kafka Server started") >= 2, timeout=120, what=f"{node.name} to start again")
    eoslab.heal(c)
    text = log()
    assert "Formatting metadata directory /var/lib/kafka/data" in text  # the first start
    assert "already formatted" in text  # the second: the image formats every time, the kit's run ignores it
    meta = subprocess.run(
        ["docker", "exec", name, "cat", f"{CONTAINER_DATA_DIR}/meta.properties"], capture_output=True, text=True
    ).stdout
    assert properties(meta)["cluster.id"] == c.topology.cluster_id
    assert c.quorum().voters == (101, 102, 103)


def test_every_tool_the_kit_runs_is_a_script_of_the_image(docker_cluster):
    name = f"{compose_project(docker_cluster.topology)}-broker-1"
    listed = subprocess.run(["docker", "exec", name, "ls", "/opt/kafka/bin"], capture_output=True, text=True).stdout
    assert {t.script for t in TOOLS.values()} <= set(listed.split())
