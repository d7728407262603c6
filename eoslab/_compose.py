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

from eoslab._ports import LOOPBACK
from eoslab.topology import JVM_HEAP, KAFKA_IMAGE, Topology, node_properties, role_jvm_flags

CONTAINER_DATA_DIR = "/var/lib/kafka/data"
COMPOSE_PROJECT = "eoslab"
IMAGE_VARIABLE = "EOSLAB_KAFKA_IMAGE"

WRAPPER_EXCLUDED = frozenset(
    {
        # KafkaDockerWrapper's ExcludeServerPropsEnv (4.1.2): variables for the scripts, not properties.
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


def render_compose(topo: Topology | None = None) -> str:
    topo = topo or Topology()  # the canonical ports, whatever $EOSLAB_PORT_OFFSET says
    project = compose_project(topo)
    lines = [
        "# Rendered from eoslab/topology.py by `eoslab render` (make compose): do not edit by hand;",
        "# tests/unit/test_compose.py fails when this file and the topology disagree.",
        "# The cluster of the course: 3 KRaft controllers (static voters) + 3 brokers, RF 3, min ISR 2.",
        "# Use it through the kit: EOSLAB_BACKEND=docker eoslab up",
        f"# Another image than the official one: {IMAGE_VARIABLE}=eoslab/kafka:{topo.kafka_version} (docs/docker.md).",
        f"name: {project}",
        "services:",
    ]
    for node in topo.nodes:
        props = node_properties(topo, node, data_dir=CONTAINER_DATA_DIR, docker=True)
        lines += [
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
        lines.append(f"      KAFKA_JVM_PERFORMANCE_OPTS: {_quote(role_jvm_flags(node.role))}")
        for key, value in props.items():
            lines.append(f"      {env_name(key)}: {_quote(value)}")
        lines.append("    ports:")
        published = node.ports if not node.is_broker else (node.client_port, node.proxied_port)
        lines += [f'      - "{LOOPBACK}:{p}:{p}"' for p in published]
        lines += ["    volumes:", f"      - {node.name}-data:{CONTAINER_DATA_DIR}"]
    lines.append("volumes:")
    lines += [f"  {n.name}-data: {{}}" for n in topo.nodes]
    return "\n".join(lines) + "\n"
