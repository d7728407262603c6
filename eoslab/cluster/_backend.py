"""What every backend does: the node operations the rest of the kit builds on.

A backend knows processes (or containers) and nothing about Kafka's state:
whether the quorum has a leader or a partition its ISR is asked of Kafka
itself, in :mod:`eoslab.cluster._admin`, the same way for both backends.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from eoslab._timeouts import NODE_STOP, TOOL
from eoslab.cluster._startup import PhaseHook
from eoslab.topology import Node, Topology

NodeState = Literal["running", "paused", "stopped"]


@dataclass(frozen=True)
class NodeStatus:
    """One row of ``eoslab status``."""

    name: str
    role: str
    node_id: int
    state: NodeState
    pid: int | None
    ports: tuple[int, ...]
    rss_mb: float | None = None


@dataclass(frozen=True)
class Tool:
    """A Kafka CLI tool: its main class (local JVM) and its script (in the image)."""

    main_class: str
    script: str


TOOLS: dict[str, Tool] = {
    # DumpLogSegments moved from kafka.tools (Scala) to org.apache.kafka.tools (Java) in 4.3 (KAFKA-14579).
    "dump-log": Tool("org.apache.kafka.tools.DumpLogSegments", "kafka-dump-log.sh"),
    "storage": Tool("kafka.tools.StorageTool", "kafka-storage.sh"),
    "transactions": Tool("org.apache.kafka.tools.TransactionsCommand", "kafka-transactions.sh"),
    "metadata-quorum": Tool("org.apache.kafka.tools.MetadataQuorumCommand", "kafka-metadata-quorum.sh"),
    "producer-perf-test": Tool("org.apache.kafka.tools.ProducerPerformance", "kafka-producer-perf-test.sh"),
    "get-offsets": Tool("org.apache.kafka.tools.GetOffsetShell", "kafka-get-offsets.sh"),
    "topics": Tool("org.apache.kafka.tools.TopicCommand", "kafka-topics.sh"),
    "features": Tool("org.apache.kafka.tools.FeatureCommand", "kafka-features.sh"),
    # The Java consumer with ITS defaults (isolation.level=read_uncommitted): module 04 shows the contrast.
    "console-consumer": Tool("org.apache.kafka.tools.consumer.ConsoleConsumer", "kafka-console-consumer.sh"),
}


class Backend(Protocol):
    """The operations both backends implement (and one conformance test checks)."""

    name: str
    topology: Topology
    ready_timeout: float
    """How long ``Cluster.up`` waits for a cold start of this backend by default (:data:`READY` locally)."""

    def up(self, on_phase: PhaseHook | None = None) -> None:
        """Start every node that is not running (no-op when all are); do not wait for Kafka.

        ``on_phase`` is called with each step's name as it ends (``cluster._startup.PHASES``)."""

    def down(self, timeout: float = NODE_STOP) -> None:
        """Stop every node (SIGTERM, then SIGKILL after ``timeout``); nothing stays behind."""

    def reset(self) -> None:
        """Down, then delete all data so the next ``up`` formats a fresh cluster."""

    def status(self) -> list[NodeStatus]: ...

    def kill(self, node: Node) -> None:
        """SIGKILL: a crash, no controlled shutdown."""

    def stop(self, node: Node, timeout: float = NODE_STOP) -> None:
        """SIGTERM: a clean, controlled shutdown (SIGKILL after ``timeout``)."""

    def start(self, node: Node, properties: Mapping[str, str] | None = None) -> None:
        """Start a stopped node. ``properties``: settings on top of the topology's, kept until a start with
        ``{}`` or a ``down`` (None: as the node was last started)."""

    def overrides(self, node: Node) -> dict[str, str]:
        """The settings the node runs with on top of the topology's (empty: none)."""

    def pause(self, node: Node) -> None:
        """SIGSTOP: alive but silent, like a long GC pause or a frozen VM."""

    def resume(self, node: Node) -> None: ...

    def logs(self, node: Node, lines: int = 50) -> str: ...

    def died_during_start(self, node: Node) -> str | None:
        """Why a node that should be running is not, in one line of its own log (None if it runs)."""

    def data_path(self, node: Node) -> str:
        """The node's log.dirs as the tools see it (a host path, or a path in the container)."""

    def host_data_path(self, node: Node) -> Path | None:
        """The node's log.dirs on this machine, if the learner can browse it."""

    def list_files(self, node: Node, folder: str) -> list[tuple[str, int]]:
        """(name, size) of the files in ``folder`` under the node's log.dirs."""

    def tool_bootstrap_servers(self) -> str:
        """The bootstrap servers as a CLI tool of this backend reaches them."""

    def run_tool(
        self, tool: str, args: list[str], *, node: Node | None = None, timeout: float = TOOL
    ) -> subprocess.CompletedProcess[str]:
        """Run a Kafka CLI tool of the pinned release (``TOOLS``) and capture its output."""
