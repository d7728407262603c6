"""Bad input on the docker backend: one sentence that says what to do, nothing left half-started.

(Docker installed but no engine answering: tests/integration/test_bad_input.py, which needs no engine.)

Each case runs at the spare port offset (+750: no port shared with the local or the docker test
cluster) with its own data folder, beside the session's clusters.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from typing import Any

import pytest
import yaml

from eoslab._compose import compose_project, render_compose
from eoslab.cluster import Cluster, DockerBackend
from eoslab.errors import ClusterStartError
from eoslab.topology import KAFKA_IMAGE, Topology

pytestmark = pytest.mark.docker


def eoslab_up(topo: Topology, tmp_path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {
        **os.environ,
        "EOSLAB_BACKEND": "docker",
        "EOSLAB_PORT_OFFSET": str(topo.port_offset),
        "EOSLAB_DATA": str(tmp_path),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-m", "eoslab.cli", "up"], capture_output=True, text=True, env=full, timeout=300
    )


def one_sentence(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert err.startswith("eoslab: "), err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def containers_of(topo: Topology) -> list[str]:
    proc = subprocess.run(
        ["docker", "ps", "-a", "--filter", f"label=com.docker.compose.project={compose_project(topo)}", "-q"],
        capture_output=True,
        text=True,
    )
    return proc.stdout.split()


def test_an_image_that_is_neither_here_nor_pullable(docker_image, spare_topology, tmp_path):
    missing = f"eoslab/kafka:missing-{uuid.uuid4().hex[:6]}"
    err = one_sentence(eoslab_up(spare_topology, tmp_path, EOSLAB_KAFKA_IMAGE=missing))
    assert f"The Kafka image {missing} is not on this machine" in err
    assert "eoslab image build" in err and KAFKA_IMAGE in err
    assert containers_of(spare_topology) == []


def test_a_port_published_by_a_container_is_named_with_the_container(docker_image, spare_topology, tmp_path):
    from testcontainers.core.container import DockerContainer

    topo = spare_topology
    port = topo.controllers[0].controller_port
    blocker = (
        DockerContainer(docker_image).with_command(["sleep", "600"]).with_name(f"port-blocker-{uuid.uuid4().hex[:6]}")
    )
    ports: dict[str, Any] = blocker.ports  # docker-py binds (address, port); testcontainers types only a port
    ports[f"{port}/tcp"] = ("127.0.0.1", port)
    blocker.start()
    try:
        err = one_sentence(eoslab_up(topo, tmp_path, EOSLAB_KAFKA_IMAGE=docker_image))
        name = blocker.get_wrapped_container().name
        assert f"Port {port} (needed by controller-1) is held by the Docker container {name}" in err
        assert f"stop it with `docker stop {name}`, or move this one's ports with `export EOSLAB_PORT_OFFSET" in err
        assert containers_of(topo) == []
    finally:
        blocker.stop()


@pytest.mark.destructive
def test_a_container_that_exits_at_start_is_named_with_its_log_tail(docker_image, spare_topology, tmp_path):
    """controller-1 given KAFKA_ADVERTISED_LISTENERS: the image refuses it on a controller and exits."""
    from testcontainers.compose import DockerCompose

    topo = spare_topology
    base = tmp_path / "docker-compose.yml"
    base.write_text(render_compose(topo))
    override = tmp_path / "broken.yml"
    override.write_text(
        yaml.safe_dump(
            {"services": {"controller-1": {"environment": {"KAFKA_ADVERTISED_LISTENERS": "CONTROLLER://x:1"}}}}
        )
    )
    env_file = tmp_path / "image.env"
    env_file.write_text(f"EOSLAB_KAFKA_IMAGE={docker_image}\n")
    compose = DockerCompose(tmp_path, compose_file_name=[str(base), str(override)], env_file=str(env_file), wait=True)
    cluster = Cluster(DockerBackend.from_testcontainers(compose, topo, image=docker_image))
    try:
        with pytest.raises(ClusterStartError) as caught:
            cluster.up()
        first, *tail = str(caught.value).splitlines()
        assert first.startswith("controller-1 exited with code 1 (")
        assert first.endswith("fix what its log says (below), then `eoslab reset` and `eoslab up` again.")
        assert "--- last lines of controller-1's log ---" in tail
        assert "KAFKA_ADVERTISED_LISTENERS is not supported on a KRaft controller." in tail
        running = [s.name for s in cluster.status() if s.state != "stopped"]
        assert running == []  # what the failed up started, it stopped again
    finally:
        compose.stop(down=True)
    assert containers_of(topo) == []
