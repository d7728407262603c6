"""The one topology: ids, ports and the properties every node gets."""

import pytest

from eoslab.errors import UnknownNodeError
from eoslab.topology import Topology, node_properties

TOPOLOGY = Topology()  # the canonical ports, whatever $EOSLAB_PORT_OFFSET says


def test_three_controllers_three_brokers_with_the_course_ids():
    assert [(n.name, n.node_id) for n in TOPOLOGY.controllers] == [
        ("controller-1", 101),
        ("controller-2", 102),
        ("controller-3", 103),
    ]
    assert [(n.name, n.node_id) for n in TOPOLOGY.brokers] == [("broker-1", 1), ("broker-2", 2), ("broker-3", 3)]


def test_controllers_start_before_brokers():
    roles = [n.role for n in TOPOLOGY.nodes]
    assert roles == ["controller"] * 3 + ["broker"] * 3


def test_ports_are_unique_across_the_cluster_and_proxy():
    ports = [p for n in TOPOLOGY.nodes for p in n.ports] + [b.proxy_front_port for b in TOPOLOGY.brokers]
    assert len(ports) == len(set(ports))
    assert set(ports) <= set(TOPOLOGY.all_ports())


def test_static_voter_set():
    assert TOPOLOGY.quorum_voters("127.0.0.1") == "101@127.0.0.1:19101,102@127.0.0.1:19102,103@127.0.0.1:19103"
    assert TOPOLOGY.quorum_voters() == "101@controller-1:19101,102@controller-2:19102,103@controller-3:19103"


@pytest.mark.parametrize("node", TOPOLOGY.nodes, ids=lambda n: n.name)
def test_local_listeners_bind_loopback_only(node):
    props = node_properties(TOPOLOGY, node, data_dir="/x")
    for listener in props["listeners"].split(","):
        assert "://127.0.0.1:" in listener, listener


def test_broker_durability_settings():
    props = node_properties(TOPOLOGY, TOPOLOGY.brokers[0], data_dir="/x")
    assert props["default.replication.factor"] == "3"
    assert props["min.insync.replicas"] == "2"
    assert props["offsets.topic.num.partitions"] == "50"
    assert props["transaction.state.log.num.partitions"] == "50"
    assert props["transaction.state.log.replication.factor"] == "3"
    assert props["transaction.state.log.min.isr"] == "2"
    assert props["auto.leader.rebalance.enable"] == "false"
    assert props["inter.broker.listener.name"] == "INTERNAL"


def test_proxied_listener_advertises_the_proxy_front_port():
    b2 = TOPOLOGY.broker(2)
    props = node_properties(TOPOLOGY, b2, data_dir="/x")
    assert f"PROXIED://127.0.0.1:{b2.proxied_port}" in props["listeners"]
    assert f"PROXIED://127.0.0.1:{b2.proxy_front_port}" in props["advertised.listeners"]


def test_controller_has_no_broker_listeners():
    props = node_properties(TOPOLOGY, TOPOLOGY.controllers[0], data_dir="/x")
    assert props["process.roles"] == "controller"
    assert props["listeners"] == "CONTROLLER://127.0.0.1:19101"
    assert "advertised.listeners" not in props  # the apache/kafka image refuses it on a controller


def test_unknown_node_is_one_sentence_with_the_names():
    with pytest.raises(UnknownNodeError) as err:
        TOPOLOGY.node("broker-9")
    assert str(err.value) == (
        "There is no node 'broker-9' in this cluster: use one of controller-1, controller-2, controller-3, "
        "broker-1, broker-2, broker-3."
    )


def test_bootstrap_servers():
    assert TOPOLOGY.bootstrap_servers() == "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"
    assert TOPOLOGY.bootstrap_servers(proxied=True) == "127.0.0.1:19391,127.0.0.1:19392,127.0.0.1:19393"


def test_port_offset_shifts_every_port():
    shifted = Topology(port_offset=1000)
    assert shifted.bootstrap_servers() == "127.0.0.1:20091,127.0.0.1:20092,127.0.0.1:20093"
    assert shifted.proxy_control_port == 20400
    assert shifted.quorum_voters("127.0.0.1").startswith("101@127.0.0.1:20101")
