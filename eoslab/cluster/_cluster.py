"""The one cluster interface that notebooks, tests and the CLI use.

``Cluster`` wraps a backend (processes or containers) and asks Kafka itself
whether it is ready. It never knows which backend runs: a notebook asks it for
bootstrap servers, leaders, a broker to kill or a log to read.

    >>> cluster = eoslab.connect()        # the running cluster, or start one
    >>> cluster.leader("demo", 0)
    1
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping

from eoslab._java import first_error_line
from eoslab._timeouts import (
    BROKER_REGISTER,
    CONNECT_READY,
    HEAL,
    NODE_STOP,
    PROBE,
    READY,
    REQUEST,
    TOOL,
)
from eoslab._wait import wait_until
from eoslab.cluster._admin import (
    VIEW_TIMEOUT,
    Admin,
    PartitionState,
    QuorumState,
    broker_answers,
    controller_serves,
    describe_quorum,
    find_coordinators,
    unfenced_brokers,
)
from eoslab.cluster._backend import Backend, NodeStatus
from eoslab.cluster._docker import DockerBackend
from eoslab.cluster._local import LocalBackend
from eoslab.cluster._partition_waits import PartitionWaits
from eoslab.cluster._seed import ensure_seed
from eoslab.cluster._startup import PhaseHook
from eoslab.errors import ClusterError, ClusterNotRunning, ClusterStartError, KafkaToolError, SetupError
from eoslab.topology import TOPOLOGY, Node, Topology


def make_backend(name: str | None = None, topology: Topology = TOPOLOGY) -> Backend:
    """``local`` (default) or ``docker``; ``$EOSLAB_BACKEND`` chooses when ``name`` is None."""
    name = (name or os.environ.get("EOSLAB_BACKEND") or "local").lower()
    if name == "local":
        return LocalBackend(topology)
    if name == "docker":
        return DockerBackend(topology)
    raise SetupError(f"Unknown backend {name!r}: use EOSLAB_BACKEND=local or EOSLAB_BACKEND=docker.")


class Cluster(PartitionWaits):
    """3 KRaft controllers + 3 brokers, on whichever backend."""

    def __init__(self, backend: Backend | str | None = None) -> None:
        self.backend: Backend = backend if not isinstance(backend, (str, type(None))) else make_backend(backend)
        self.topology = self.backend.topology
        self._admin: Admin | None = None

    # -- context manager: a failed start tears down what it started ----------
    def __enter__(self) -> Cluster:
        self.up()
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()

    # -- addresses ------------------------------------------------------------
    def bootstrap_servers(self, proxied: bool = False) -> str:
        """Direct client listeners, or (``proxied=True``) the fault proxy's front ports."""
        return self.topology.bootstrap_servers(proxied=proxied)

    @property
    def admin(self) -> Admin:
        if self._admin is None:
            self._admin = Admin(self.topology, self.bootstrap_servers())
        return self._admin

    def node(self, name: str) -> Node:
        return self.topology.node(name)

    # -- lifecycle ------------------------------------------------------------
    def status(self) -> list[NodeStatus]:
        return self.backend.status()

    def running(self) -> list[str]:
        return [s.name for s in self.status() if s.state != "stopped"]

    def is_up(self) -> bool:
        return all(s.state == "running" for s in self.status())

    def require_running(self) -> None:
        if not self.running():
            raise ClusterNotRunning("The cluster is not running: start it with `eoslab up` (or `make lab`).")

    def up(self, timeout: float | None = None, on_phase: PhaseHook | None = None) -> Cluster:
        """Start what is not running, wait until Kafka is ready, create the seed topic.

        ``timeout`` defaults to the backend's ``ready_timeout`` (docker's is longer than local's).

        A no-op on a running, ready cluster (it does not move leaders: that is :func:`eoslab.heal`).
        If the start fails, the nodes this call started are stopped again before
        the error is raised. ``on_phase`` is told each step's name as it ends
        (``python -m tools.kitbench cluster`` prints where the time went).
        """
        if timeout is None:
            timeout = self.backend.ready_timeout
        mark = on_phase or (lambda phase: None)
        before = set(self.running())
        try:
            self.backend.up(on_phase)
            self.wait_ready(timeout, on_phase)
            if set(self.running()) != before:
                # Nodes came up one by one, so leaders landed wherever a replica was first
                # available; auto.leader.rebalance.enable=false means nobody moves them back.
                self.wait_full_isr(timeout)
                mark("full_isr")
                self.admin.elect_preferred_leaders()
                mark("election")
                ensure_seed(self.admin)
                mark("seed")
            else:
                # Running already: leave leaders where a lesson may have moved them on purpose.
                ensure_seed(self.admin, check=False)
        except BaseException:
            started = [n for n in self.topology.nodes if n.name not in before]
            for node in reversed(started):
                try:
                    self.backend.kill(node)
                except Exception:  # noqa: BLE001 - best effort, the original error matters
                    pass
            raise
        return self

    def down(self, timeout: float = NODE_STOP) -> None:
        self.backend.down(timeout)
        # The admin client's connections, backoffs and learned metadata belong to processes that are gone:
        # after the next `up` the kit asks with a new client instead of waiting for the old one to recover.
        self._admin = None

    def restore(self, timeout: float = HEAL) -> None:
        """Undo every NODE fault: resume paused nodes, start stopped ones, wait for full ISRs, move
        leaders back to their preferred replicas, recreate the demo topic if a lesson deleted it.

        The proxy's faults are not the cluster's to undo: :func:`eoslab.heal` undoes both.
        """
        deadline = time.monotonic() + timeout
        stopped = []
        for node in self.topology.nodes:  # a node restarted with other settings (reconfigure) gets the topology's
            if self.backend.overrides(node):
                self.backend.stop(node)
                self.backend.start(node, {})
                stopped.append(node)
        for status in self.status():
            if status.state == "paused":
                self.backend.resume(self.topology.node(status.name))
            elif status.state == "stopped":
                stopped.append(self.topology.node(status.name))
        self.backend.up()  # starts whatever is stopped; a no-op for running nodes
        for node in stopped:
            self.wait_serving(node, timeout=max(1.0, deadline - time.monotonic()))
        self.wait_ready(max(1.0, deadline - time.monotonic()))
        self.wait_full_isr(timeout)
        self.admin.elect_preferred_leaders()
        ensure_seed(self.admin)  # recreates the demo topic if a lesson deleted it, then checks leaders

    def reset(self) -> None:
        """Stop everything and delete all data: the next ``up`` formats a new cluster."""
        self.backend.reset()

    def _op_node(self, name: str | Node) -> Node:
        node = name if isinstance(name, Node) else self.topology.node(name)
        self.require_running()
        return node

    def kill(self, name: str | Node) -> Node:
        """SIGKILL a node: a crash, no controlled shutdown."""
        node = self._op_node(name)
        self.backend.kill(node)
        return node

    def stop(self, name: str | Node) -> Node:
        """SIGTERM a node: a clean shutdown (a broker hands over its leaderships first)."""
        node = self._op_node(name)
        self.backend.stop(node)
        return node

    def start(self, name: str | Node, wait: bool = True, timeout: float = BROKER_REGISTER) -> Node:
        """Start a stopped node; ``wait``: until its new process serves (:meth:`wait_serving`)."""
        node = name if isinstance(name, Node) else self.topology.node(name)
        self.backend.start(node)
        if wait:
            self.wait_serving(node, timeout)
        return node

    def reconfigure(self, name: str | Node, properties: Mapping[str, str], timeout: float = HEAL) -> Node:
        """Restart a node with ``properties`` on top of the topology's, for settings a running broker reads only
        at start; :meth:`restore` (``eoslab heal``) restarts it with the topology's again.

        A clean stop (SIGTERM: the broker hands its leaderships over), the start, full ISRs, then the preferred
        leaders elected, so the node leads (and coordinates) what it led before. Raises ClusterError.
        """
        node = self._op_node(name)
        deadline = time.monotonic() + timeout
        self.backend.stop(node)
        self.backend.start(node, dict(properties))
        self.wait_serving(node, timeout=timeout)
        self.wait_full_isr(max(1.0, deadline - time.monotonic()))
        self.admin.elect_preferred_leaders()
        return node

    def pause(self, name: str | Node) -> Node:
        """SIGSTOP a node: alive but silent, like a long GC pause."""
        node = self._op_node(name)
        self.backend.pause(node)
        return node

    def resume(self, name: str | Node) -> Node:
        node = self._op_node(name)
        self.backend.resume(node)
        return node

    def logs(self, name: str | Node, lines: int = 50) -> str:
        node = name if isinstance(name, Node) else self.topology.node(name)
        return self.backend.logs(node, lines)

    def tool(self, tool: str, *args: str, node: str | None = None, timeout: float = TOOL) -> str:
        """Run a Kafka CLI tool of the pinned release (see ``TOOLS``) and return its stdout.

        ``{bootstrap}`` in an argument is replaced by the bootstrap servers as the
        tool reaches them (loopback for the local backend, the compose network for docker).
        """
        argv = [a.replace("{bootstrap}", self.backend.tool_bootstrap_servers()) for a in args]
        target = self.topology.node(node) if node else None
        proc = self.backend.run_tool(tool, argv, node=target, timeout=timeout)
        if proc.returncode != 0:
            raise KafkaToolError(f"kafka {tool} {' '.join(args)} failed: {first_error_line(proc.stderr + proc.stdout)}")
        return proc.stdout

    # -- what Kafka says --------------------------------------------------------
    def quorum(self, timeout: float = REQUEST) -> QuorumState:
        """Ask the controllers in turn until one answers DescribeQuorum."""
        errors = []
        for c in self.topology.controllers:
            try:
                return describe_quorum(c, timeout)
            except Exception as exc:  # noqa: BLE001 - try the next controller
                errors.append(f"{c.name}: {exc}")
        raise ClusterNotRunning("No controller answered DescribeQuorum (" + "; ".join(errors) + "): is the cluster up?")

    def brokers(self) -> list[int]:
        return self.admin.brokers()

    def partitions(self, topic: str | None = None) -> list[PartitionState]:
        return self.admin.partitions(topic)

    def partition(self, topic: str, partition: int) -> PartitionState:
        for p in self.admin.partitions(topic):
            if p.partition == partition:
                return p
        raise ClusterError(
            f"Topic {topic!r} has no partition {partition}: cluster.partitions({topic!r}) lists its partitions."
        )

    def leader(self, topic: str, partition: int) -> int:
        return self.partition(topic, partition).leader

    def isr(self, topic: str, partition: int) -> tuple[int, ...]:
        return self.partition(topic, partition).isr

    # -- waits ------------------------------------------------------------------
    def _log_tails(self, names: Iterable[str] = ()) -> str:
        names = list(names) or [n.name for n in self.topology.nodes]
        parts = []
        for name in names:
            tail = self.logs(name, 5)
            if tail:
                parts.append(f"--- last lines of {name}'s log ---\n{tail}")
        return "\n".join(parts)

    def _check_alive(self) -> None:
        dead = [s.name for s in self.status() if s.state == "stopped"]
        if dead:
            why = []
            for name in dead:
                reason = self.backend.died_during_start(self.topology.node(name))
                why.append(f"{name}: {reason}" if reason else name)
            raise ClusterStartError(
                "These nodes are not running: " + "; ".join(why) + ". Fix the cause, then `eoslab up` again."
            )

    def wait_ready(self, timeout: float = READY, on_phase: PhaseHook | None = None) -> None:
        """Ready = 3 voters with a leader, 3 brokers unfenced, internal topics created and loaded."""
        mark = on_phase or (lambda phase: None)
        deadline = time.monotonic() + timeout
        n_brokers = len(self.topology.brokers)

        def remaining() -> float:
            return max(1.0, deadline - time.monotonic())

        def quorum_ok() -> QuorumState | None:
            self._check_alive()
            q = self.quorum(timeout=PROBE)
            want = tuple(c.node_id for c in self.topology.controllers)
            return q if q.leader_id in want and q.voters == want else None

        wait_until(
            quorum_ok,
            timeout=remaining(),
            what="a KRaft quorum of 3 voters with a leader",
            describe=lambda: self._log_tails([c.name for c in self.topology.controllers]),
            hint="A controller that cannot start usually says why in its log: `eoslab logs controller-1`.",
        )
        mark("quorum")

        def brokers_ok() -> bool:
            self._check_alive()
            return len(unfenced_brokers(self.topology, timeout=PROBE)) == n_brokers

        wait_until(
            brokers_ok,
            timeout=remaining(),
            what=f"{n_brokers} registered, unfenced brokers",
            describe=lambda: self._log_tails([b.name for b in self.topology.brokers]),
            hint="See `eoslab logs broker-1` (and 2, 3).",
        )
        mark("brokers")

        broker = self.topology.brokers[0]

        def coordinators_ok() -> bool:
            self._check_alive()
            # Both key types in every probe: the first FindCoordinator of each makes the broker create its
            # topic, so neither creation waits for the other (asking for transactions only once groups
            # answered put __transaction_state's creation ~0.6 s behind __consumer_offsets').
            found = [find_coordinators(broker, kt, ["eoslab-ready"], timeout=VIEW_TIMEOUT) for kt in (0, 1)]
            return all(f["eoslab-ready"][0] == 0 for f in found)

        wait_until(
            coordinators_ok,
            timeout=remaining(),
            what="__consumer_offsets and __transaction_state to be created and loaded",
            describe=lambda: self._log_tails([b.name for b in self.topology.brokers]),
        )
        mark("coordinators")

    def wait_serving(self, node: str | Node, timeout: float = BROKER_REGISTER) -> None:
        """Wait until ``node``'s own process answers on its own port: a broker a Metadata request (and it
        is registered and unfenced), a controller DescribeQuorum (any voter answers; only the leader with the
        quorum).

        Asking the cluster is not enough right after a kill: the dead broker keeps its registration until
        ``broker.session.timeout.ms`` (5 s) runs out and its place in every ISR until
        ``replica.lag.time.max.ms`` (10 s) does, so "3 brokers, full ISRs" can hold while the restarted
        JVM is still starting. Only the node's own answer proves the new process serves (its listeners,
        the proxy's PROXIED one included, open together once it has caught up with the metadata log).
        """
        node = node if isinstance(node, Node) else self.topology.node(node)

        def probe() -> bool:
            if not node.is_broker:
                return controller_serves(node, timeout=PROBE)
            broker_answers(node, PROBE)
            return node.node_id in self.admin.brokers(timeout=PROBE)

        wait_until(
            probe,
            timeout=timeout,
            what=f"{node.name} to serve again (its own answer on port "
            f"{node.client_port if node.is_broker else node.controller_port})",
            describe=lambda: self._log_tails([node.name]),
            hint=f"A node that cannot start says why in its log: `eoslab logs {node.name}`.",
        )


def connect(backend: Backend | str | None = None, *, start: bool = True) -> Cluster:
    """The running cluster (checked ready), or a freshly started one when ``start``."""
    cluster = Cluster(backend)
    if not cluster.running():
        if not start:
            cluster.require_running()
        return cluster.up()
    if not cluster.is_up() and start:
        return cluster.up()  # some nodes stopped: start them
    cluster.wait_ready(timeout=CONNECT_READY)
    return cluster
