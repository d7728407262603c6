"""``docker-compose.yml``, rendered from :mod:`eoslab.topology`.

The official ``apache/kafka`` image turns every ``KAFKA_*`` variable into a
property (strip ``KAFKA_``, lower-case, ``___`` → ``-``, ``__`` → ``_``,
``_`` → ``.``) and, as soon as one is set, drops its own default config: so we
pass every property of the node. ``CLUSTER_ID`` makes the image format the
storage (``kafka-storage format``) on first start; with
``controller.quorum.voters`` that is a static quorum, the only kind the image
can format. Published ports bind to 127.0.0.1 only.
"""

from __future__ import annotations

import re

from eoslab._ports import LOOPBACK
from eoslab.topology import JVM_HEAP, KAFKA_IMAGE, Topology, node_properties

CONTAINER_DATA_DIR = "/var/lib/kafka/data"
COMPOSE_PROJECT = "eoslab"


def env_name(prop: str) -> str:
    """``transaction.state.log.min.isr`` → ``KAFKA_TRANSACTION_STATE_LOG_MIN_ISR``."""
    return "KAFKA_" + prop.replace("_", "__").replace("-", "___").replace(".", "_").upper()


def prop_name(env: str) -> str:
    """The image's own mapping (``ConvertKey`` in docker/resources/utility/utility.go).

    Single underscores are found with the regex ``[^_]_[^_]`` and non-overlapping
    matches, so a one-letter segment (``KAFKA_A_B_C``) would keep an underscore:
    the compose test round-trips every property through this to catch that.
    """
    body = re.sub(r"[^_]_[^_]", lambda m: m.group(0).replace("_", "."), env[len("KAFKA_") :])
    return body.replace("___", "-").replace("__", "_").lower()


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_compose(topo: Topology | None = None) -> str:
    topo = topo or Topology()  # the canonical ports, whatever $EOSLAB_PORT_OFFSET says
    lines = [
        "# Rendered from eoslab/topology.py by `eoslab render` (make compose): do not edit by hand;",
        "# tests/unit/test_compose.py fails when this file and the topology disagree.",
        "# The cluster of the course: 3 KRaft controllers (static voters) + 3 brokers, RF 3, min ISR 2.",
        "# Use it through the kit: EOSLAB_BACKEND=docker eoslab up",
        f"name: {COMPOSE_PROJECT}",
        "services:",
    ]
    for node in topo.nodes:
        props = node_properties(topo, node, data_dir=CONTAINER_DATA_DIR, docker=True)
        lines += [
            f"  {node.name}:",
            f"    image: {KAFKA_IMAGE}",
            f"    hostname: {node.name}",
            f"    container_name: {COMPOSE_PROJECT}-{node.name}",
        ]
        if node.is_broker:
            lines += ["    depends_on:"] + [f"      - {c.name}" for c in topo.controllers]
        lines += ["    environment:", f"      CLUSTER_ID: {_quote(topo.cluster_id)}"]
        # KAFKA_HEAP_OPTS is read by kafka-run-class.sh; the image's exclude list misspells
        # it (KAFKA_HEAP_OPT), so it also lands as an unknown property `heap.opts`, which Kafka ignores.
        lines.append(f"      KAFKA_HEAP_OPTS: {_quote(JVM_HEAP[node.role])}")
        for key, value in props.items():
            lines.append(f"      {env_name(key)}: {_quote(value)}")
        lines.append("    ports:")
        published = node.ports if not node.is_broker else (node.client_port, node.proxied_port)
        lines += [f'      - "{LOOPBACK}:{p}:{p}"' for p in published]
        lines += ["    volumes:", f"      - {node.name}-data:{CONTAINER_DATA_DIR}"]
    lines.append("volumes:")
    lines += [f"  {n.name}-data: {{}}" for n in topo.nodes]
    return "\n".join(lines) + "\n"
