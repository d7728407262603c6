"""docker-compose.yml is rendered from the topology and must not drift from it."""

from pathlib import Path

import pytest
import yaml

from eoslab._compose import WRAPPER_EXCLUDED, compose_project, env_name, prop_name, render_compose
from eoslab.topology import JVM_HEAP, KAFKA_VERSION, Topology, node_properties, role_jvm_flags

TOPOLOGY = Topology()  # the canonical ports the compose file uses

ROOT = Path(__file__).resolve().parents[2]


def test_committed_compose_file_equals_the_rendering():
    committed = (ROOT / "docker-compose.yml").read_text()
    assert committed == render_compose(), "docker-compose.yml drifted from eoslab/topology.py: run `make compose`"


@pytest.mark.parametrize("prop", ["transaction.state.log.min.isr", "node.id", "log.dirs", "a_b.c-d"])
def test_env_names_map_back_to_properties_as_the_image_reads_them(prop):
    assert prop_name(env_name(prop)) == prop


def test_env_name_examples():
    assert env_name("min.insync.replicas") == "KAFKA_MIN_INSYNC_REPLICAS"
    assert env_name("a_b") == "KAFKA_A__B"


def test_prop_name_is_the_wrappers_mapping():
    # KafkaDockerWrapper.getServerConfigsFromEnv: strip KAFKA_, lower-case, _ -> ., then ... -> - and .. -> _
    assert prop_name("KAFKA_LOG_DIRS") == "log.dirs"
    assert prop_name("KAFKA_A_B_C") == "a.b.c"  # one-letter segments are no special case
    assert prop_name("KAFKA_SASL_MECHANISM_INTER___BROKER__PROTOCOL") == "sasl.mechanism.inter-broker_protocol"


@pytest.fixture(scope="module")
def compose():
    return yaml.safe_load(render_compose())


def test_every_node_is_a_service_of_the_pinned_image(compose):
    # the six nodes, then the lab container (profile lab: `docker compose up` alone starts the nodes only)
    assert list(compose["services"]) == [*(n.name for n in TOPOLOGY.nodes), "lab"]
    for svc in (compose["services"][n.name] for n in TOPOLOGY.nodes):
        # the official image for learners; $EOSLAB_KAFKA_IMAGE (compose interpolation) for another one
        assert svc["image"] == f"${{EOSLAB_KAFKA_IMAGE:-apache/kafka:{KAFKA_VERSION}}}"


@pytest.mark.parametrize("node", TOPOLOGY.nodes, ids=lambda n: n.name)
def test_service_environment_is_exactly_the_node_properties(compose, node):
    env = compose["services"][node.name]["environment"]
    props = {prop_name(k): v for k, v in env.items() if k.startswith("KAFKA_") and k not in WRAPPER_EXCLUDED}
    assert props == node_properties(TOPOLOGY, node, data_dir="/var/lib/kafka/data", docker=True)
    assert env["CLUSTER_ID"] == TOPOLOGY.cluster_id
    # the image's default heap is 1 GB per node: each role gets the kit's own, and the kit's JVM flags
    assert env["KAFKA_HEAP_OPTS"] == JVM_HEAP[node.role]
    assert env["KAFKA_JVM_PERFORMANCE_OPTS"] == role_jvm_flags(node.role)
    assert not any("$" in str(v) for v in env.values())  # compose would interpolate it
    if node.role == "controller":
        assert "KAFKA_ADVERTISED_LISTENERS" not in env


@pytest.mark.parametrize("node", TOPOLOGY.nodes, ids=lambda n: n.name)
def test_published_ports_bind_loopback(compose, node):
    for spec in compose["services"][node.name]["ports"]:
        host, hport, cport = spec.split(":")
        assert host == "127.0.0.1" and hport == cport


def test_brokers_wait_for_controllers(compose):
    for b in TOPOLOGY.brokers:
        assert compose["services"][b.name]["depends_on"] == [c.name for c in TOPOLOGY.controllers]


def test_container_listeners_bind_inside_and_peers_use_names(compose):
    env = compose["services"]["broker-1"]["environment"]
    assert env["KAFKA_LISTENERS"].startswith("CLIENT://0.0.0.0:19091")
    assert "INTERNAL://broker-1:19191" in env["KAFKA_ADVERTISED_LISTENERS"]
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == TOPOLOGY.quorum_voters()


def test_a_cluster_at_another_offset_gets_its_own_project_ports_and_names():
    topo = Topology(port_offset=3500)
    other = yaml.safe_load(render_compose(topo))
    assert other["name"] == compose_project(topo) == "eoslab-3500"
    assert compose_project(TOPOLOGY) == "eoslab"
    b1 = other["services"]["broker-1"]
    assert b1["container_name"] == "eoslab-3500-broker-1"
    assert b1["ports"] == ["127.0.0.1:22591:22591", "127.0.0.1:22791:22791"]
    assert b1["environment"]["KAFKA_ADVERTISED_LISTENERS"] == (
        "CLIENT://127.0.0.1:22591,INTERNAL://broker-1:22691,PROXIED://127.0.0.1:22891"
    )
    assert other["services"]["controller-1"]["environment"]["KAFKA_CONTROLLER_QUORUM_VOTERS"].startswith(
        "101@controller-1:22601,"
    )


def test_the_suites_c1_brokers_reach_a_rendering_at_another_offset_never_the_committed_file(monkeypatch):
    monkeypatch.setenv("EOSLAB_BROKER_JIT", "c1")

    def jvm(topo, node):
        return yaml.safe_load(render_compose(topo))["services"][node]["environment"]["KAFKA_JVM_PERFORMANCE_OPTS"]

    beside = Topology(port_offset=500)
    assert jvm(beside, "broker-1").endswith("-XX:TieredStopAtLevel=1")
    assert jvm(beside, "controller-1") == role_jvm_flags("controller")  # controllers as local ones: unchanged
    assert jvm(TOPOLOGY, "broker-1") == role_jvm_flags("broker")  # a learner's file stays C2
    monkeypatch.delenv("EOSLAB_BROKER_JIT")
    assert jvm(beside, "broker-1") == role_jvm_flags("broker")


def test_a_tool_in_a_container_runs_with_the_tool_jvm_flags_not_the_nodes(monkeypatch):
    from eoslab._compose import CONTAINER_TOOL_ENV
    from eoslab.cluster import DockerBackend

    compose = ["docker", "compose", "-p", "eoslab-500", "-f", "eoslab-500.yml"]  # given: no engine asked for
    backend = DockerBackend(Topology(port_offset=500), compose)
    seen: list[list[str]] = []
    monkeypatch.setattr(backend, "_run", lambda argv, timeout: seen.append(argv))
    backend.run_tool("dump-log", ["--files", "x.log"], node=backend.topology.broker(2))
    argv = seen[0]
    env = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "-e")
    assert env == dict(CONTAINER_TOOL_ENV)
    assert "-XX:TieredStopAtLevel=1" in env["KAFKA_JVM_PERFORMANCE_OPTS"] and "-Xmx256m" in env["KAFKA_HEAP_OPTS"]
    assert argv[: len(compose)] == compose
    exec_at = argv.index("exec")
    assert argv[exec_at : exec_at + 2] == ["exec", "-T"] and argv[-3:] == [
        "/opt/kafka/bin/kafka-dump-log.sh", "--files", "x.log"
    ]  # fmt: skip
    assert argv[argv.index("/opt/kafka/bin/kafka-dump-log.sh") - 1] == "broker-2"  # the options before the service
