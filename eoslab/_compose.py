"""``docker-compose.yml``, rendered from :mod:`eoslab.topology`.

The ``apache/kafka`` image (``kafka.docker.KafkaDockerWrapper`` in ``kafka_2.13-<v>.jar``) turns every
``KAFKA_*`` variable into a property (strip ``KAFKA_``, lower-case, ``_`` → ``.``, then ``...`` → ``-``
and ``..`` → ``_``), except eleven it leaves to the scripts (``KAFKA_HEAP_OPTS``, ``KAFKA_OPTS``,
``KAFKA_JVM_PERFORMANCE_OPTS`` …). As soon as one property variable is set, its own default config is
dropped: so we pass every property of the node. ``CLUSTER_ID`` makes the image format the storage on
every start; with ``controller.quorum.voters`` that is a static quorum, the only kind the image formats.
Published ports bind to 127.0.0.1 only.

The image is ``${EOSLAB_KAFKA_IMAGE:-apache/kafka:<v>}``: the official one unless the variable names
another (the local build of :mod:`eoslab._image`). The committed file uses port offset 0; a cluster at
another offset (a second cluster beside the first, the test suite's) gets its own rendering, its own
compose project and container names (:func:`compose_project`).
"""

from __future__ import annotations

from eoslab._compose_lab import render_lab_service
from eoslab._ports import LOOPBACK
from eoslab.topology import (
    JVM_HEAP,
    KAFKA_IMAGE,
    TOOL_JVM_FLAGS,
    Node,
    Topology,
    local_broker_extra_flags,
    node_properties,
    role_jvm_flags,
)

CONTAINER_DATA_DIR = "/var/lib/kafka/data"
COMPOSE_PROJECT = "eoslab"
CONTAINER_CDS_ARCHIVE = "/opt/kafka/kafka.jsa"
"""The class archive a node's JVM maps (built into the kit's image, and the official image's too)."""
CONTAINER_TOOL_ENV: tuple[tuple[str, str], ...] = (
    ("KAFKA_HEAP_OPTS", "-Xms32m -Xmx256m"),
    (
        "KAFKA_JVM_PERFORMANCE_OPTS",
        f"{TOOL_JVM_FLAGS} -XX:SharedArchiveFile={CONTAINER_CDS_ARCHIVE} -Xlog:cds=off -Xlog:cds+dynamic=off",
    ),
)
"""A CLI tool run in a node's container (``docker compose exec``) gets these instead of the node's own
(a broker's G1, C2 and 256-512 MB heap): the local backend's tool flags and the node's class archive, as
local tools map theirs. Measured on 2 cores: ``kafka-transactions.sh list`` 0.94 s instead of 1.40 s
(docs/docker.md). A missing archive (another image) is skipped silently (``-Xshare:auto``)."""
IMAGE_VARIABLE = "EOSLAB_KAFKA_IMAGE"
HEALTH_INTERVAL = "2s"
"""How often compose checks that a broker listens (Docker's default, 30 s, would hold the lab service back)."""

WRAPPER_EXCLUDED = frozenset(
    {
        # KafkaDockerWrapper's ExcludeServerPropsEnv (kafka.docker.Constants, the same eleven in 4.1.2 and
        # 4.4.0, read with javap): variables for the scripts, not properties.
        "KAFKA_VERSION",
        "KAFKA_HEAP_OPTS",
        "KAFKA_LOG4J_OPTS",
        "KAFKA_OPTS",
        "KAFKA_JMX_OPTS",
        "KAFKA_JVM_PERFORMANCE_OPTS",
        "KAFKA_GC_LOG_OPTS",
        "KAFKA_LOG4J_ROOT_LOGLEVEL",
        "KAFKA_LOG4J_LOGGERS",
        "KAFKA_TOOLS_LOG4J_LOGLEVEL",
        "KAFKA_JMX_HOSTNAME",
    }
)


def env_name(prop: str) -> str:
    """``transaction.state.log.min.isr`` → ``KAFKA_TRANSACTION_STATE_LOG_MIN_ISR``."""
    return "KAFKA_" + prop.replace("_", "__").replace("-", "___").replace(".", "_").upper()


def prop_name(env: str) -> str:
    """The property KafkaDockerWrapper makes of a ``KAFKA_*`` variable (``getServerConfigsFromEnv``)."""
    return env.replace("KAFKA_", "", 1).lower().replace("_", ".").replace("...", "-").replace("..", "_")


def compose_project(topo: Topology) -> str:
    """``eoslab`` at offset 0 (the committed file); ``eoslab-<offset>`` for a cluster beside it."""
    return COMPOSE_PROJECT if topo.port_offset == 0 else f"{COMPOSE_PROJECT}-{topo.port_offset}"


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _healthcheck(broker: Node) -> list[str]:
    """Healthy once the broker listens on its INTERNAL port (the lab service waits for it): bash's /dev/tcp, in
    the official image and the kit's alike (both run bash scripts), no JVM of its own."""
    probe = f"exec 3<>/dev/tcp/{LOOPBACK}/{broker.internal_port}"
    return [
        "    healthcheck:",
        f'      test: ["CMD", "bash", "-c", {_quote(probe)}]',
        f"      interval: {HEALTH_INTERVAL}",
        "      timeout: 5s",
        "      retries: 90",
    ]


def _service(topo: Topology, node: Node, project: str) -> list[str]:
    """The compose service of one node: its image, environment (the node's properties), ports and volume."""
    props = node_properties(topo, node, data_dir=CONTAINER_DATA_DIR, docker=True)
    lines = [
        f"  {node.name}:",
        f"    image: ${{{IMAGE_VARIABLE}:-{KAFKA_IMAGE}}}",
        f"    hostname: {node.name}",
        f"    container_name: {project}-{node.name}",
    ]
    if node.is_broker:
        lines += ["    depends_on:"] + [f"      - {c.name}" for c in topo.controllers]
    lines += ["    environment:", f"      CLUSTER_ID: {_quote(topo.cluster_id)}"]
    # Read by the image's scripts, not turned into properties: the heap per role (the image's
    # default is 1 GB per node, six of which do not fit a learner's laptop) and the kit's JVM flags.
    lines.append(f"      KAFKA_HEAP_OPTS: {_quote(JVM_HEAP[node.role])}")
    # A rendering beside another cluster (offset != 0: the test suite's) follows $EOSLAB_BROKER_JIT as local
    # nodes do; the committed file (offset 0, a learner's) never does.
    jit = local_broker_extra_flags(node.role) if topo.port_offset else ()
    lines.append(f"      KAFKA_JVM_PERFORMANCE_OPTS: {_quote(' '.join((role_jvm_flags(node.role), *jit)))}")
    for key, value in props.items():
        lines.append(f"      {env_name(key)}: {_quote(value)}")
    lines.append("    ports:")
    published = node.ports if not node.is_broker else (node.client_port, node.proxied_port)
    lines += [f'      - "{LOOPBACK}:{p}:{p}"' for p in published]
    lines += ["    volumes:", f"      - {node.name}-data:{CONTAINER_DATA_DIR}"]
    if node.is_broker:
        lines += _healthcheck(node)
    return lines


def render_compose(topo: Topology | None = None, *, lab: bool | None = None) -> str:
    """The compose file of ``topo`` (default: offset 0, whatever ``$EOSLAB_PORT_OFFSET`` says). ``lab``: with the lab
    service (profile ``lab``); by default only at offset 0, the committed file's: a cluster the kit renders beside
    it (the test suite's) runs no lab container, while a copy of the course started on other ports does."""
    topo = topo or Topology()
    project = compose_project(topo)
    lines = [
        "# Rendered from eoslab/topology.py by `eoslab render` (make compose): do not edit by hand;",
        "# tests/unit/test_compose.py fails when this file and the topology disagree.",
        "# The cluster of the course: 3 KRaft controllers (static voters) + 3 brokers, RF 3, min ISR 2.",
        "# Use it through the kit: EOSLAB_BACKEND=docker eoslab up",
        "# Or the whole course in containers (profile lab, README): docker compose --profile lab up -d",
        f"# Another image than the official one: {IMAGE_VARIABLE}=eoslab/kafka:{topo.kafka_version} (docs/docker.md).",
        f"name: {project}",
        "services:",
    ]
    for node in topo.nodes:
        lines += _service(topo, node, project)
    with_lab = topo.port_offset == 0 if lab is None else lab
    if with_lab:
        lines += render_lab_service(topo, project)
    lines.append("volumes:")
    lines += [f"  {n.name}-data: {{}}" for n in topo.nodes]
    return "\n".join(lines) + "\n"
