"""The Kafka image's contract that the kit relies on, proved on the image the docker tests run.

Here that is the local build (eoslab/kafka, from the pinned jars); with Docker Hub it can be the
official apache/kafka (``EOSLAB_KAFKA_IMAGE=apache/kafka:4.4.0``): the same tests hold for both.
The mapping of variables to properties is checked by running the image's own
``kafka.docker.KafkaDockerWrapper`` on every service of the rendered compose file.

These tests need the image, not the session's docker cluster: either xdist worker runs them (gw1 after the
offline workshop install). What is proved inside that cluster's running containers (process 1, heap, user,
storage formatted on every start, the tools' scripts) is in tests/integration/test_docker_containers.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml

from eoslab import _image
from eoslab._compose import CONTAINER_DATA_DIR, render_compose
from eoslab.topology import KAFKA_IMAGE, Topology, node_properties

pytestmark = pytest.mark.docker

WRAPPER_SETUP = (
    "/opt/kafka/bin/kafka-run-class.sh kafka.docker.KafkaDockerWrapper setup "
    "--default-configs-dir /etc/kafka/docker --mounted-configs-dir /mnt/shared/config "
    "--final-configs-dir /opt/kafka/config"
)


def run_once(image: str, env: dict[str, str], script: str) -> tuple[int, str]:
    """One throw-away container (testcontainers): its exit code and its output."""
    from testcontainers.core.container import DockerContainer

    container = DockerContainer(image).with_command(["bash", "-c", script])
    for key, value in env.items():
        container.with_env(key, value)
    container.start()
    try:
        code = container.get_wrapped_container().wait(timeout=180)["StatusCode"]
        out, err = container.get_logs()
        return code, (out + err).decode(errors="replace")
    finally:
        container.stop()


def properties(text: str) -> dict[str, str]:
    rows = [line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#")]
    return {k.strip(): v.strip() for k, v in rows}


def section(out: str, name: str) -> str:
    """The lines after a '=== name' line, up to the next '=== ' line."""
    return re.split(r"(?m)^=== ", out.split(f"=== {name}\n", 1)[1], maxsplit=1)[0]


def test_the_wrapper_turns_every_rendered_service_into_exactly_its_node_properties(docker_image):
    """The rendered compose file, fed to the image's own KafkaDockerWrapper: the node's properties, no more."""
    topo = Topology(port_offset=3500)
    services = yaml.safe_load(render_compose(topo))["services"]
    script = (
        f"{WRAPPER_SETUP} >/dev/null 2>&1; echo \"=== rc $?\"; echo '=== server.properties';"
        f" cat /opt/kafka/config/server.properties; echo; echo '=== meta.properties';"
        f" cat {CONTAINER_DATA_DIR}/meta.properties; echo '=== log4j2'; ls /opt/kafka/config"
    )

    def setup(node):
        return node, run_once(docker_image, services[node.name]["environment"], script)

    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(setup, topo.nodes))
    for node, (code, out) in results:
        assert code == 0 and "=== rc 0" in out, out
        got = properties(section(out, "server.properties"))
        assert got == node_properties(topo, node, data_dir=CONTAINER_DATA_DIR, docker=True), node.name
        # KAFKA_HEAP_OPTS and KAFKA_JVM_PERFORMANCE_OPTS are left to the scripts (the wrapper's exclude list)
        assert not {"heap.opts", "jvm.performance.opts"} & set(got)
        meta = properties(section(out, "meta.properties"))
        assert meta["cluster.id"] == topo.cluster_id and meta["node.id"] == str(node.node_id)
        assert "log4j2.yaml" in section(out, "log4j2")  # the logging binding's config, written by the wrapper


def test_without_KAFKA_LOG_DIRS_the_data_goes_to_kafkas_own_default_not_the_volume(docker_image):
    """Why the compose file sets KAFKA_LOG_DIRS: once any KAFKA_* variable is set, the image's default
    server.properties (log.dirs=/tmp/kraft-combined-logs) is dropped, and Kafka's own default
    log.dir=/tmp/kafka-logs applies: the data would not be in the declared volume /var/lib/kafka/data."""
    env = {
        "CLUSTER_ID": "ZW9zbGFiLWNsdXN0ZXItMQ",
        "KAFKA_NODE_ID": "101",
        "KAFKA_PROCESS_ROLES": "controller",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": "101@localhost:9093",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "KAFKA_LISTENERS": "CONTROLLER://0.0.0.0:9093",
    }
    script = f"{WRAPPER_SETUP}; echo '=== volume'; ls -A {CONTAINER_DATA_DIR}; echo '=== tmp'; ls -A /tmp/kafka-logs"
    code, out = run_once(docker_image, env, script)
    assert code == 0, out
    assert "Formatting metadata directory /tmp/kafka-logs" in out
    assert section(out, "volume").strip() == ""
    assert "meta.properties" in section(out, "tmp").split()


def test_the_compose_file_runs_the_official_image_unless_the_variable_names_another(docker_image, tmp_path):
    path = tmp_path / "docker-compose.yml"
    path.write_text(render_compose())

    def images(**env: str) -> set[str]:
        full = {k: v for k, v in os.environ.items() if k != _image.IMAGE_ENV} | env
        proc = subprocess.run(
            ["docker", "compose", "-f", str(path), "config", "--images"], capture_output=True, text=True, env=full
        )
        assert proc.returncode == 0, proc.stderr
        return set(proc.stdout.split())

    assert images() == {KAFKA_IMAGE}
    assert images(EOSLAB_KAFKA_IMAGE=_image.LOCAL_IMAGE) == {_image.LOCAL_IMAGE}


def test_a_second_build_reuses_the_image(docker_image):
    if docker_image != _image.LOCAL_IMAGE:
        pytest.skip(f"the docker tests run {docker_image}, not the local build")
    before = _image.image_id(_image.LOCAL_IMAGE)
    again = _image.build_image(echo=lambda _: None)
    assert again.cached and again.base_seconds is None
    assert _image.image_id(_image.LOCAL_IMAGE) == before
