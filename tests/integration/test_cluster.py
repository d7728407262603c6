"""The foundation against the real cluster: processes, quorum, brokers, durability, faults, heal."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest
from confluent_kafka import KafkaError, Producer

import eoslab
from eoslab._ports import LOOPBACK
from eoslab._timeouts import HEAL
from eoslab.cluster._admin import describe_quorum
from eoslab.errors import ClusterError
from eoslab.faults import ensure_proxy
from eoslab.protocol import KafkaConnection
from eoslab.topology import DEMO_TOPIC, TOPOLOGY

pytestmark = pytest.mark.cluster


def _produce_one(bootstrap: str, topic: str, partition: int, **conf) -> KafkaError | None:
    """Produce one record and return the delivery report's error (None = acknowledged)."""
    reports: list = []
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", **conf})
    p.produce(topic, b"v", partition=partition, on_delivery=lambda err, msg: reports.append(err))
    remaining = p.flush(30)
    assert remaining == 0, "the delivery report never came"
    return reports[0]


def test_six_jvms_run_and_listen_on_loopback_only(cluster):
    rows = cluster.status()
    assert [(r.name, r.state) for r in rows] == [(n.name, "running") for n in TOPOLOGY.nodes]
    pids = {r.pid for r in rows}
    assert len(pids) == 6
    for row in rows:
        proc = psutil.Process(row.pid)
        assert "kafka.Kafka" in proc.cmdline()
        listening = [c.laddr for c in proc.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
        assert sorted(a.port for a in listening) == sorted(row.ports), row.name
        # Java may report an IPv4 bind as the IPv4-mapped IPv6 address: still loopback only.
        assert {a.ip.removeprefix("::ffff:") for a in listening} == {"127.0.0.1"}, row.name


def test_quorum_has_three_voters_and_a_leader(cluster):
    q = cluster.quorum()
    assert q.voters == (101, 102, 103)
    assert q.leader_id in q.voters
    assert q.leader_epoch >= 1
    assert set(q.observers) == {1, 2, 3}  # brokers follow the metadata log without voting


def test_three_brokers_registered_and_unfenced(cluster):
    assert cluster.brokers() == [1, 2, 3]


def test_internal_topics_exist_with_50_partitions_rf3(cluster):
    by_topic: dict[str, list] = {}
    for p in cluster.partitions():
        by_topic.setdefault(p.topic, []).append(p)
    for name in ("__consumer_offsets", "__transaction_state"):
        assert len(by_topic[name]) == 50
        assert all(len(p.replicas) == 3 for p in by_topic[name])
    assert cluster.admin.topic_config("__transaction_state")["min.insync.replicas"] == "2"


def test_a_new_topic_gets_rf3_and_min_isr_2(cluster, topic_name):
    cluster.admin.create_topic(topic_name, partitions=3)
    parts = cluster.partitions(topic_name)
    assert len(parts) == 3
    assert all(len(p.replicas) == 3 for p in parts)
    assert cluster.admin.topic_config(topic_name)["min.insync.replicas"] == "2"
    assert _produce_one(cluster.bootstrap_servers(), topic_name, 0) is None
    cluster.admin.delete_topic(topic_name)


def test_seed_arrangement(cluster):
    parts = cluster.partitions(DEMO_TOPIC)
    assert [(p.partition, p.leader, p.replicas) for p in parts] == [(0, 1, (1, 2, 3)), (1, 2, (2, 3, 1))]
    assert cluster.admin.topic_config(DEMO_TOPIC)["min.insync.replicas"] == "2"


def test_up_on_a_running_cluster_is_a_no_op(cluster):
    before = {r.name: r.pid for r in cluster.status()}
    t0 = time.monotonic()
    cluster.up()
    assert {r.name: r.pid for r in cluster.status()} == before
    assert time.monotonic() - t0 < 10


@pytest.mark.destructive
def test_min_isr_is_real(healed, topic_name):
    """Leader alone in the ISR: acks=all is refused with NOT_ENOUGH_REPLICAS (19), never acknowledged.

    Idempotence off and retries=0: librdkafka would otherwise retry error 19 until
    message.timeout.ms (5 min by default) and we would only see a timeout.

    Seen on this cluster: the metadata can show ISR=[1] a moment before the leader's
    own partition state applies the shrink; a produce in that moment is appended with
    the old ISR and waits for a dead follower (a timeout, or NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    20). So: up to 3 attempts, none may succeed, and the refusal must come as error 19.
    """
    cluster = healed
    cluster.admin.create_topic(topic_name, replica_assignment=[[1, 2, 3]])
    assert _produce_one(cluster.bootstrap_servers(), topic_name, 0) is None
    cluster.kill("broker-2")
    cluster.kill("broker-3")
    cluster.wait_for_isr(topic_name, 0, [1], timeout=60)
    conf = {"enable.idempotence": False, "retries": 0, "message.timeout.ms": 8000, "request.timeout.ms": 5000}
    errors = []
    for _ in range(3):
        err = _produce_one(cluster.bootstrap_servers(), topic_name, 0, **conf)
        errors.append(err)
        assert err is not None, f"an acks=all write was acknowledged with ISR=[1]: {errors}"
        if err.code() == KafkaError.NOT_ENOUGH_REPLICAS:
            break
    last = errors[-1]
    assert last is not None and last.code() == KafkaError.NOT_ENOUGH_REPLICAS == 19, errors


@pytest.mark.destructive
def test_killed_leader_is_replaced_and_rejoins_the_isr(healed):
    cluster = healed
    old = cluster.leader(DEMO_TOPIC, 0)
    assert old == 1
    cluster.kill(f"broker-{old}")
    new = cluster.wait_for_new_leader(DEMO_TOPIC, 0, old, timeout=30)
    assert new in (2, 3)
    assert old not in cluster.isr(DEMO_TOPIC, 0)
    # The surviving ISR still takes acks=all writes.
    assert _produce_one(cluster.bootstrap_servers(), DEMO_TOPIC, 0) is None
    cluster.start(f"broker-{old}")
    cluster.wait_for_isr(DEMO_TOPIC, 0, [1, 2, 3], timeout=60)
    assert cluster.leader(DEMO_TOPIC, 0) == new  # no automatic move back: auto.leader.rebalance.enable=false


@pytest.mark.destructive
@pytest.mark.parametrize(("how", "broker"), [("python", 1), ("cli", 2)])
def test_heal_restores_the_seed_arrangement_after_kill_and_pause(healed, how, broker):
    """In a notebook (``eoslab.heal``) and from a terminal (``eoslab heal``, a fresh process whose admin
    client has never seen the cluster: its first preferred election once waited out the reconnect
    back-off to the restarted broker in a single attempt)."""
    cluster = healed
    cluster.kill(f"broker-{broker}")
    cluster.wait_for_new_leader(DEMO_TOPIC, broker - 1, broker)
    cluster.pause("controller-3")
    assert {r.name: r.state for r in cluster.status()}["controller-3"] == "paused"
    if how == "python":
        eoslab.heal(cluster)
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "eoslab.cli", "heal"], capture_output=True, text=True, timeout=HEAL + 30
        )
        assert proc.returncode == 0, proc.stderr
        assert "Healed" in proc.stdout
    assert all(r.state == "running" for r in cluster.status())
    assert cluster.leader(DEMO_TOPIC, 0) == 1 and cluster.leader(DEMO_TOPIC, 1) == 2
    assert all(sorted(p.isr) == sorted(p.replicas) for p in cluster.partitions())


@pytest.mark.destructive
def test_heal_right_after_a_kill_returns_once_the_new_process_serves(healed):
    """Within 5 s of a kill the dead broker is still registered and in every ISR: a heal that only asked
    the cluster returned while the restarted JVM was starting, and the next lesson's request to that
    broker (through the proxy, whose dial was refused) was reset."""
    cluster = healed
    ensure_proxy(cluster)  # the request below goes through it too, whichever test ran before
    old = next(s.pid for s in cluster.status() if s.name == "broker-3")
    cluster.kill("broker-3")
    eoslab.heal(cluster)
    assert next(s.pid for s in cluster.status() if s.name == "broker-3") != old
    broker = cluster.topology.broker(3)
    for port in (broker.client_port, broker.proxy_front_port):  # directly, and through the fault proxy
        with KafkaConnection(LOOPBACK, port, client_id="heal-check", timeout=5) as conn:
            assert conn.api_versions()


@pytest.mark.destructive
def test_a_restarted_follower_controller_counts_as_serving(healed):
    """Only the quorum's leader describes it; a follower answers DescribeQuorum with
    NOT_LEADER_OR_FOLLOWER, and that answer is what shows its new process serves (waiting for error 0
    timed out on every follower restart, as a CI run of the docker backend showed)."""
    cluster = healed
    leader = cluster.quorum().leader_id
    follower = next(c for c in cluster.topology.controllers if c.node_id != leader)
    cluster.stop(follower)
    cluster.start(follower)  # wait=True: returns once the follower answers (a WaitTimeout otherwise)
    with pytest.raises(ClusterError, match="error 6"):
        describe_quorum(follower, timeout=5)
    assert cluster.quorum().voters == (101, 102, 103)


@pytest.mark.destructive
def test_clean_stop_moves_leadership_before_exit(healed):
    cluster = healed
    cluster.stop("broker-2")  # SIGTERM: controlled shutdown hands leadership over first
    assert {r.name: r.state for r in cluster.status()}["broker-2"] == "stopped"
    assert cluster.leader(DEMO_TOPIC, 1) in (1, 3)


def test_nodes_map_the_class_data_sharing_archive(cluster):
    """Start-up speed comes from the AppCDS archive: every node JVM must actually map it."""
    import os

    if os.environ.get("EOSLAB_CDS") == "0":
        pytest.skip("EOSLAB_CDS=0 turned the archive off")
    args = (cluster.backend.root / "jvm.args").read_text()
    assert "-XX:SharedArchiveFile=" in args
    archive = args.split("-XX:SharedArchiveFile=")[1].split()[0]
    for row in cluster.status():
        maps = open(f"/proc/{row.pid}/maps").read()
        assert archive in maps, f"{row.name} did not map {archive}"
