"""The ``lab`` service of ``docker-compose.yml`` (profile ``lab``): the whole course in containers.

``docker compose --profile lab up -d`` starts the six nodes and this service, which runs JupyterLab on
http://127.0.0.1:8888 from the lab image (:mod:`eoslab._lab_image`; compose builds it from the repository
when it is not here). The kit inside it is in compose mode (``EOSLAB_IN_COMPOSE=1``, see
:func:`eoslab.topology.in_compose`): it reaches the brokers by container name and runs the fault proxy,
whose front ports and control port this service publishes on the host's 127.0.0.1, so clients on the host
keep working. It drives the nodes through the engine's socket, mounted here: that is root-equivalent
control of the host's Docker (README). The learner's course folder is bind-mounted at ``/course``:
recreating the container loses nothing.
"""

from __future__ import annotations

from eoslab._ports import LOOPBACK
from eoslab._version import __version__
from eoslab.topology import KAFKA_IMAGE, Topology

LAB_PROFILE = "lab"
LAB_SERVICE = "lab"
LAB_PORT = 8888
LAB_IMAGE_VARIABLE = "EOSLAB_LAB_IMAGE"
LAB_PORT_VARIABLE = "EOSLAB_LAB_PORT"
LAB_BASE_VARIABLE = "EOSLAB_LAB_BASE"
REGISTRY_BASE = "debian:bookworm-20251117-slim"
"""The public base a learner's build starts from, pinned by its dated tag (Debian's images on Docker Hub)."""
DOCKERFILE = "eoslab/_resources/lab/Dockerfile"
"""Relative to the build context: the repository's root (compose), or the context :mod:`eoslab._lab_image` writes."""
COURSE_MOUNT = "/course"
DOCKER_SOCKET = "/var/run/docker.sock"


def jupyterlab_port(topo: Topology) -> int:
    """JupyterLab's port on the host: 8888 at offset 0, shifted with the cluster's ports at another."""
    return LAB_PORT + topo.port_offset


def lab_ports(topo: Topology) -> list[int]:
    """What the lab service publishes on 127.0.0.1: JupyterLab, the proxy's front ports, its control API."""
    return [jupyterlab_port(topo), *(b.proxy_front_port for b in topo.brokers), topo.proxy_control_port]


def _published(topo: Topology) -> list[str]:
    """Host port to container port. JupyterLab listens on 8888 inside; outside on ``$EOSLAB_LAB_PORT`` when set (a
    learner whose 8888 another Jupyter holds), else 8888 + the offset."""
    lab = f"${{{LAB_PORT_VARIABLE}:-{jupyterlab_port(topo)}}}"
    proxy = [f'      - "{LOOPBACK}:{p}:{p}"' for p in lab_ports(topo)[1:]]
    return [f'      - "{LOOPBACK}:{lab}:{LAB_PORT}"', *proxy]


def render_lab_service(topo: Topology, project: str) -> list[str]:
    """The service's lines (under ``services:``) for the compose project ``project``."""
    lines = [
        f"  {LAB_SERVICE}:",
        f"    profiles: [{LAB_PROFILE}]",
        "    build:",
        "      context: .",
        f"      dockerfile: {DOCKERFILE}",
        "      args:",
        f"        BASE: ${{{LAB_BASE_VARIABLE}:-{REGISTRY_BASE}}}",
        f"        KAFKA_VERSION: {topo.kafka_version}",
        f"    image: ${{{LAB_IMAGE_VARIABLE}:-eoslab/lab:{__version__}}}",
        f"    container_name: {project}-{LAB_SERVICE}",
        f"    hostname: {LAB_SERVICE}",
        "    depends_on:",
    ]
    for b in topo.brokers:
        lines += [f"      {b.name}:", "        condition: service_healthy"]
    lines += [
        "    environment:",
        '      EOSLAB_BACKEND: "docker"',
        '      EOSLAB_IN_COMPOSE: "1"',
        f'      EOSLAB_PORT_OFFSET: "{topo.port_offset}"',
        f"      EOSLAB_KAFKA_IMAGE: ${{EOSLAB_KAFKA_IMAGE:-{KAFKA_IMAGE}}}",
        "    ports:",
        *_published(topo),
        "    volumes:",
        f"      - .:{COURSE_MOUNT}",
        f"      - {DOCKER_SOCKET}:{DOCKER_SOCKET}",
    ]
    return lines
