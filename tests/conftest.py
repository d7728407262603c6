"""Shared fixtures: ONE real cluster for the whole session, healed around every fault.

No mock Kafka anywhere: a test that needs Kafka gets the local backend's six
JVMs (started here if `make test` did not already start them). Tests marked
``docker`` get a second cluster beside it: six containers started through
testcontainers on ports shifted by +500 (``docker_cluster``), skipped with the
reason where no Docker engine answers.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest

# testcontainers: Ryuk's image cannot be pulled without a registry, and the host the containers
# publish on is the loopback (without TC_HOST, testcontainers reports the bridge gateway 172.17.0.1).
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TC_HOST", "127.0.0.1")

import eoslab
from eoslab.cluster import Cluster
from eoslab.topology import TOPOLOGY, Topology

DOCKER_OFFSET_STEP = 500
"""The docker test cluster's ports = the local cluster's + 500: no port of one equals a port of the other
(the port plan's ports mod 1000 are 091-093, 101-103, 191-193, 291-293, 391-393, 400)."""
SPARE_OFFSET_STEP = 750
"""Clusters that must never start (bad input): clear of the local (+0), docker (+500) and next (+1000) ones."""


def docker_offset() -> int:
    return int(os.environ.get("EOSLAB_DOCKER_PORT_OFFSET") or TOPOLOGY.port_offset + DOCKER_OFFSET_STEP)


def spare_offset() -> int:
    return TOPOLOGY.port_offset + SPARE_OFFSET_STEP


# Recorded outputs and sample notebooks used BY tests; nbval must not run them as tests.
collect_ignore = ["data"]


@pytest.fixture(scope="session")
def cluster():
    """The running cluster of ``$EOSLAB_BACKEND`` (local unless set); started (and stopped at the end) if it
    was not running. `make test` sets the backend per tier."""
    c = Cluster()
    started_here = not c.is_up()
    c.up()
    yield c
    if started_here and not os.environ.get("EOSLAB_KEEP_CLUSTER"):
        c.down()


@pytest.fixture
def healed(cluster):
    """For tests that kill, stop or pause nodes: heal before and after, whatever happens."""
    eoslab.heal(cluster)
    yield cluster
    eoslab.heal(cluster)


@pytest.fixture
def topic_name(request):
    """A fresh topic name per test, so tests are re-runnable on a long-lived cluster."""
    return f"t-{request.node.name[:40].replace('[', '-').replace(']', '')}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def spare_topology() -> Topology:
    """A topology whose cluster must never start (bad input): ports +750."""
    return Topology(port_offset=spare_offset())


@pytest.fixture(scope="session")
def docker_image() -> str:
    """The Kafka image of the docker tests (``$EOSLAB_KAFKA_IMAGE``, else the one here: see eoslab._image)."""
    if os.environ.get("EOSLAB_DOCKER_TESTS") == "0":
        pytest.skip("docker tests switched off (EOSLAB_DOCKER_TESTS=0)")
    from eoslab import _image
    from eoslab.cluster import docker_available

    if (why := docker_available()) is not None:
        pytest.skip(f"docker backend not tested here: {why} (tools/system/docker.sh ensure installs and starts it)")
    image = _image.kafka_image()
    if not _image.image_exists(image) and not _image.pull(image):
        if image != _image.LOCAL_IMAGE and os.environ.get(_image.IMAGE_ENV):
            pytest.fail(f"{_image.IMAGE_ENV}={image}: that image is not here and cannot be pulled.")
        image = _image.build_image().image  # root + debootstrap, else a SetupError that says what to do
    return image


@pytest.fixture(scope="session")
def docker_cluster(docker_image, tmp_path_factory, request):
    """Six containers of ``docker_image`` through testcontainers' DockerCompose, beside the local cluster.

    Its compose file is rendered for ports +500 (:func:`eoslab.cluster.compose_file`); the fault proxy
    runs in front of it. Everything (containers, volumes, proxy) is removed at the end of the session.
    """
    from testcontainers.compose import DockerCompose

    from eoslab.cluster import DockerBackend, compose_file
    from eoslab.faults import ensure_proxy, stop_proxy

    topo = Topology(port_offset=docker_offset())
    path = compose_file(topo)
    env_file = tmp_path_factory.mktemp("docker") / "image.env"
    env_file.write_text(f"EOSLAB_KAFKA_IMAGE={docker_image}\n")
    compose = DockerCompose(path.parent, compose_file_name=str(path), env_file=str(env_file), pull=False, wait=True)
    compose.stop(down=True)  # what an interrupted run left: start from empty volumes
    cluster = Cluster(DockerBackend.from_testcontainers(compose, topo, image=docker_image))
    start = time.monotonic()
    cluster.up()
    took = time.monotonic() - start
    ensure_proxy(cluster)
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():  # a figure for the CI log: the docker cold start
        print(f"\ndocker cluster ({docker_image}, port offset {topo.port_offset}): ready in {took:.0f} s", flush=True)
    try:
        yield cluster
    finally:
        stop_proxy(topo)
        cluster.down()
