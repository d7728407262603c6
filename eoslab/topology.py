"""The ONE definition of the course's cluster: nodes, ports and properties.

Both backends render from here: the local backend writes each node's
``server.properties`` (:func:`node_properties`), and ``docker-compose.yml`` is
rendered by :mod:`eoslab._compose` from the same data. Change a setting here,
run ``eoslab render`` (or ``make compose``), commit both.

Port plan (all on 127.0.0.1 in the local backend, published to 127.0.0.1 in
the docker one); the last digit is the broker's node.id so a learner can read
a port and know the broker:

==================  ===========================================================
19101..19103        controller-1..3 (node.id 101..103), CONTROLLER listener
19091..19093        broker-1..3 CLIENT listener: direct client access
19191..19193        broker-1..3 INTERNAL listener: replication between brokers
19291..19293        broker-1..3 PROXIED listener: what the fault proxy forwards to
19391..19393        the fault proxy's front ports, advertised by PROXIED
19400               the fault proxy's control API
==================  ===========================================================

``$EOSLAB_PORT_OFFSET`` (default 0) shifts every port of the local backend, so a
second cluster (another checkout, a helper's) can run beside the first. The
committed ``docker-compose.yml`` always uses offset 0.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from eoslab._ports import LOOPBACK
from eoslab.errors import SetupError, UnknownNodeError

KAFKA_VERSION = "4.4.0"
"""The one Apache Kafka release: the local jars (eoslab/_java/kafka/pom.xml) and the image tag."""

KAFKA_IMAGE = f"apache/kafka:{KAFKA_VERSION}"

CLUSTER_ID = "ZW9zbGFiLWNsdXN0ZXItMQ"
"""Fixed base64 UUID ("eoslab-cluster-1"), so both backends and every reset agree."""

Role = Literal["controller", "broker"]

CONTROLLER_PORT_BASE = 19100
CLIENT_PORT_BASE = 19090
INTERNAL_PORT_BASE = 19190
PROXIED_PORT_BASE = 19290
PROXY_FRONT_PORT_BASE = 19390
PROXY_CONTROL_PORT = 19400

OFFSETS_PARTITIONS = 50
TXN_STATE_PARTITIONS = 50

DEMO_TOPIC = "demo"
"""The course's topic: partition 0 is "A" (led by broker 1), partition 1 is "B" (broker 2)."""
DEMO_PARTITION_LEADERS = {0: 1, 1: 2}

IN_COMPOSE_VARIABLE = "EOSLAB_IN_COMPOSE"
"""``1`` in the lab container (docker-compose.yml's ``lab`` service): the kit runs inside the compose network."""


def in_compose() -> bool:
    """True in the lab container. There the brokers' CLIENT listeners (advertised as 127.0.0.1) are out of
    reach, so direct clients use the INTERNAL listeners by container name (``broker-N:1919N``); the fault proxy
    binds every interface (the lab service publishes its ports on the host's 127.0.0.1) and dials
    ``broker-N:<proxied port>``. PROXIED still advertises ``127.0.0.1:<front>``: in the container that is the
    proxy itself, on the host the lab service's published port, so host clients work at the same time."""
    return os.environ.get(IN_COMPOSE_VARIABLE, "") == "1"


def bind_host() -> str:
    """Where the fault proxy and its control API listen: 127.0.0.1, or every interface in the lab container."""
    return "0.0.0.0" if in_compose() else LOOPBACK


@dataclass(frozen=True)
class Node:
    """One Kafka process of the topology."""

    name: str
    node_id: int
    role: Role
    port_offset: int = 0

    @property
    def is_broker(self) -> bool:
        return self.role == "broker"

    @property
    def controller_port(self) -> int:
        assert self.role == "controller"
        return CONTROLLER_PORT_BASE + self.node_id - 100 + self.port_offset

    @property
    def client_port(self) -> int:
        assert self.is_broker
        return CLIENT_PORT_BASE + self.node_id + self.port_offset

    @property
    def internal_port(self) -> int:
        assert self.is_broker
        return INTERNAL_PORT_BASE + self.node_id + self.port_offset

    @property
    def proxied_port(self) -> int:
        assert self.is_broker
        return PROXIED_PORT_BASE + self.node_id + self.port_offset

    @property
    def proxy_front_port(self) -> int:
        assert self.is_broker
        return PROXY_FRONT_PORT_BASE + self.node_id + self.port_offset

    def direct_address(self) -> tuple[str, int]:
        """Where this process reaches the node without the proxy: a broker's CLIENT listener on 127.0.0.1, a
        controller's port; in the lab container (:func:`in_compose`) by container name, a broker's INTERNAL."""
        if not in_compose():
            return LOOPBACK, self.client_port if self.is_broker else self.controller_port
        return self.name, self.internal_port if self.is_broker else self.controller_port

    def proxied_address(self) -> tuple[str, int]:
        """Where the fault proxy dials this broker's PROXIED listener."""
        return (self.name if in_compose() else LOOPBACK), self.proxied_port

    @property
    def ports(self) -> tuple[int, ...]:
        """Ports this node itself binds."""
        if self.is_broker:
            return (self.client_port, self.internal_port, self.proxied_port)
        return (self.controller_port,)


# Settings shared by controllers and brokers. Each line says why it is here.
COMMON_PROPERTIES: dict[str, str] = {
    # The durability the course is about: 3 copies, a write needs 2 in sync (acks=all).
    # On BOTH roles: in KRaft a CreateTopics is forwarded to the active controller, and it
    # is the controller's default.replication.factor / num.partitions that apply (with
    # these on brokers only, a new topic silently gets RF 1); the leader broker enforces
    # min.insync.replicas, and the controller uses it for eligible leader replicas (KIP-966).
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "num.partitions": "1",
    # A broker that misses heartbeats for 5 s is fenced. Default 9000 ms; lower
    # (e.g. 3000) risks spurious fencing when a GC pause meets a busy 2-core laptop.
    "broker.session.timeout.ms": "5000",
    "broker.heartbeat.interval.ms": "1000",  # default 2000; 5 beats per session
    # Leaders must not move back on their own in the middle of a lesson: `heal`
    # runs the preferred-leader election explicitly instead.
    "auto.leader.rebalance.enable": "false",
    # Small thread pools: six JVMs share 2 cores.
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "num.recovery.threads.per.data.dir": "1",
}

BROKER_PROPERTIES: dict[str, str] = {
    # Internal topics: 50 partitions each, so `abs(hash(id)) % 50` picks the coordinator.
    "offsets.topic.num.partitions": str(OFFSETS_PARTITIONS),
    "offsets.topic.replication.factor": "3",
    "transaction.state.log.num.partitions": str(TXN_STATE_PARTITIONS),
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    # The hung-transaction demo: the coordinator looks for timed-out
    # transactions every second (default 10 s), so an abort shows up promptly.
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
    # Consumer groups start at once (default waits 3 s for more members).
    "group.initial.rebalance.delay.ms": "0",
    # KIP-848 groups (group.protocol=consumer): the BROKER sets a member's session and heartbeat. The
    # defaults (45 s, 5 s; minimums the same) would hold a killed processor's partitions for 45 s; 6 s and
    # 1 s are what module 05's classic processors set themselves (session.timeout.ms, heartbeat.interval.ms).
    "group.consumer.min.session.timeout.ms": "6000",
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.heartbeat.interval.ms": "1000",
    "group.consumer.heartbeat.interval.ms": "1000",
    # A follower that stops fetching leaves the ISR after 10 s (default 30 s), so
    # a paused broker shows in a lesson; a killed one is fenced after 5 s anyway.
    "replica.lag.time.max.ms": "10000",
    "num.replica.fetchers": "1",
    "log.cleaner.threads": "1",
    "auto.create.topics.enable": "false",  # topics are created on purpose in lessons
    # Records below a log start offset that DeleteRecords moved (the benchmark trims every slice) leave the
    # disk only at the next retention check: every 10 s here, not every 5 min (the default), which at
    # saturation is tens of GB on a laptop's disk.
    "log.retention.check.interval.ms": "10000",
}

CONTROLLER_PROPERTIES: dict[str, str] = {
    # Controllers keep the metadata log (with the ProducerIdsRecords of module 02).
    "metadata.log.max.record.bytes.between.snapshots": "20971520",
    # The active controller appends a NoOpRecord to an idle metadata log this often (KIP-835; default 500 ms),
    # and every other node fetches and applies it: that alone kept an idle cluster at ~0.3 of a core on 2 cores
    # (0.14 with 5 s; docs/reliability.md, session 17). Every real change is still appended at once.
    "metadata.max.idle.interval.ms": "5000",
}

JVM_HEAP = {"broker": "-Xms256m -Xmx512m", "controller": "-Xms64m -Xmx192m"}
"""Heaps: a broker with a few demo topics needs < 300 MB live; controllers far less."""

JVM_FLAGS = "-XX:CICompilerCount=2 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true"
"""Every node JVM: 2 JIT compiler threads (the fewest tiered compilation allows) for 2 cores."""

G1_FLAGS = (
    # Kafka's own defaults (G1, short pauses) with fewer GC threads for 2 cores.
    "-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 "
    "-XX:ParallelGCThreads=1 -XX:ConcGCThreads=1"
)

CONTROLLER_FLAGS = (
    # A controller answers a few requests a second: the C1 compiler alone and the serial GC (one thread,
    # no concurrent marking) start it with less CPU than C2 + G1 would spend on the brokers' share.
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
)

JVM_ROLE_FLAGS: dict[Role, str] = {"broker": G1_FLAGS, "controller": CONTROLLER_FLAGS}
"""Flags of one role's JVMs, after JVM_FLAGS and the heap."""

BEFORE_ROLE_FLAGS: dict[Role, str] = {"broker": G1_FLAGS, "controller": G1_FLAGS}
"""The role flags before issue 14 (every node G1 + C2), selected by ``EOSLAB_COLD_START=before``."""

COLD_START_ENV = "EOSLAB_COLD_START"
"""``before``: start nodes the way the kit did before issue 14 (for `python -m tools.kitbench cluster`'s
before/after)."""


def cold_start_before() -> bool:
    """True when ``$EOSLAB_COLD_START`` asks for the start path before issue 14."""
    return os.environ.get(COLD_START_ENV, "") == "before"


def role_jvm_flags(role: Role) -> str:
    """Every JVM flag of a node of ``role`` except its heap: :data:`JVM_FLAGS` and the role's own."""
    flags = BEFORE_ROLE_FLAGS if cold_start_before() else JVM_ROLE_FLAGS
    return f"{JVM_FLAGS} {flags[role]}"


BROKER_JIT_ENV = "EOSLAB_BROKER_JIT"
"""``c1``: the local backend's brokers stop at the C1 compiler too (``make test`` sets it; a learner's stay C2).

The suite restarts brokers dozens of times and each start pays its JIT warm-up again on the two cores every
test process shares: C1-compiled brokers start and heal with less CPU, at a lower peak speed that only a
benchmark sees — and the benchmarks compare figures measured against the same brokers."""


def local_broker_extra_flags(role: Role) -> tuple[str, ...]:
    """The flags ``$EOSLAB_BROKER_JIT`` adds to a local node of ``role`` (none unless a broker and ``c1``)."""
    c1 = os.environ.get(BROKER_JIT_ENV, "").strip().lower() == "c1"
    return ("-XX:TieredStopAtLevel=1",) if role == "broker" and c1 and not cold_start_before() else ()


TOOL_JVM_FLAGS = (
    # Short-lived CLI tools: stop at the C1 compiler, serial GC, small heap: ~40 % faster start.
    "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -Xms32m -Xmx256m -Djava.awt.headless=true"
)


@dataclass(frozen=True)
class Topology:
    """The cluster: 3 KRaft controllers (a static voter set) and 3 brokers."""

    port_offset: int = 0
    cluster_id: str = CLUSTER_ID
    kafka_version: str = KAFKA_VERSION
    controllers: tuple[Node, ...] = field(init=False)
    brokers: tuple[Node, ...] = field(init=False)

    def __post_init__(self) -> None:
        off = self.port_offset
        object.__setattr__(
            self, "controllers", tuple(Node(f"controller-{i}", 100 + i, "controller", off) for i in (1, 2, 3))
        )
        object.__setattr__(self, "brokers", tuple(Node(f"broker-{i}", i, "broker", off) for i in (1, 2, 3)))

    @classmethod
    def from_env(cls) -> Topology:
        """The topology of this process: ``$EOSLAB_PORT_OFFSET`` shifts every port."""
        raw = os.environ.get("EOSLAB_PORT_OFFSET", "0") or "0"
        try:
            offset = int(raw)
        except ValueError:
            msg = f"EOSLAB_PORT_OFFSET={raw!r} is not a number: set it to e.g. 1000, or unset it."
            raise SetupError(msg) from None
        return cls(port_offset=offset)

    @property
    def proxy_control_port(self) -> int:
        return PROXY_CONTROL_PORT + self.port_offset

    @property
    def nodes(self) -> tuple[Node, ...]:
        """Start order: controllers first, then brokers."""
        return self.controllers + self.brokers

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        names = ", ".join(n.name for n in self.nodes)
        raise UnknownNodeError(f"There is no node {name!r} in this cluster: use one of {names}.")

    def broker(self, node_id: int) -> Node:
        for b in self.brokers:
            if b.node_id == node_id:
                return b
        return self.node(f"broker-{node_id}")  # raises with the list of names

    def quorum_voters(self, host: str | None = None) -> str:
        """``controller.quorum.voters``: id@host:port for each controller.

        ``host=None`` uses each controller's own name (docker network), else the given host.
        """
        return ",".join(f"{c.node_id}@{host or c.name}:{c.controller_port}" for c in self.controllers)

    def bootstrap_servers(self, proxied: bool = False, host: str = LOOPBACK) -> str:
        """Client bootstrap list: direct, or through the fault proxy (direct in the lab container: INTERNAL)."""
        if not proxied and host == LOOPBACK and in_compose():
            return ",".join("{}:{}".format(*b.direct_address()) for b in self.brokers)
        return ",".join(f"{host}:{b.proxy_front_port if proxied else b.client_port}" for b in self.brokers)

    def all_ports(self) -> dict[int, str]:
        """Every port the cluster and its proxy bind, and who binds it."""
        out: dict[int, str] = {}
        for n in self.nodes:
            for p in n.ports:
                out[p] = n.name
        for b in self.brokers:
            out[b.proxy_front_port] = f"fault proxy for {b.name}"
        out[self.proxy_control_port] = "fault proxy control API"
        return out


def node_properties(topo: Topology, node: Node, *, data_dir: str, docker: bool = False) -> dict[str, str]:
    """The full property set of one node.

    ``docker=False``: every listener binds 127.0.0.1 (loopback only).
    ``docker=True``: listeners bind inside the container (0.0.0.0); clients on the
    host reach the published 127.0.0.1 ports, brokers reach each other by name.
    """
    bind = "0.0.0.0" if docker else LOOPBACK
    peer = None if docker else LOOPBACK  # how nodes name each other
    props: dict[str, str] = {
        "node.id": str(node.node_id),
        "process.roles": node.role,
        "controller.quorum.voters": topo.quorum_voters(peer),
        "controller.listener.names": "CONTROLLER",
        "log.dirs": data_dir,
    }
    props.update(COMMON_PROPERTIES)
    if node.is_broker:
        own = node.name if docker else LOOPBACK
        props.update(
            {
                "listeners": (
                    f"CLIENT://{bind}:{node.client_port},INTERNAL://{bind}:{node.internal_port},"
                    f"PROXIED://{bind}:{node.proxied_port}"
                ),
                # CLIENT and PROXIED are reached from the host; INTERNAL from peers.
                "advertised.listeners": (
                    f"CLIENT://{LOOPBACK}:{node.client_port},INTERNAL://{own}:{node.internal_port},"
                    f"PROXIED://{LOOPBACK}:{node.proxy_front_port}"
                ),
                "listener.security.protocol.map": (
                    "CONTROLLER:PLAINTEXT,CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,PROXIED:PLAINTEXT"
                ),
                "inter.broker.listener.name": "INTERNAL",
            }
        )
        props.update(BROKER_PROPERTIES)
    else:
        props.update(
            {
                "listeners": f"CONTROLLER://{bind}:{node.controller_port}",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            }
        )
        props.update(CONTROLLER_PROPERTIES)
    return props


def render_properties(props: dict[str, str]) -> str:
    header = "# Rendered by eoslab.topology: edit the topology, not this file.\n"
    return header + "".join(f"{k}={v}\n" for k, v in props.items())


TOPOLOGY = Topology.from_env()
"""The topology this process uses (offset from ``$EOSLAB_PORT_OFFSET``)."""
