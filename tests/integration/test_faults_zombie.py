"""A frozen transactional producer is fenced by its successor; thawed, it learns so."""

from __future__ import annotations

import uuid

import psutil
import pytest
from confluent_kafka import Producer

from eoslab._paths import clients_dir
from eoslab._wait import wait_until
from eoslab.faults import Proxy, ZombieProducer, demo_producer_config, ensure_proxy

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def proxy(cluster):
    ensure_proxy(cluster)
    return Proxy(cluster.topology)


def test_frozen_zombie_is_fenced_by_its_successor(cluster, proxy, topic_name):
    cluster.admin.create_topic(topic_name, partitions=1)
    txn_id = f"zombie-txn-{uuid.uuid4().hex[:8]}"
    zid, sid = f"zombie-{uuid.uuid4().hex[:6]}", f"successor-{uuid.uuid4().hex[:6]}"
    bootstrap = cluster.bootstrap_servers(proxied=True)
    with ZombieProducer(demo_producer_config(bootstrap, zid, **{"transactional.id": txn_id})) as zombie:
        pid_file = clients_dir() / f"zombie-{zombie.pid}.pid"
        assert pid_file.read_text().strip() == str(zombie.pid)  # `eoslab heal` would end it
        assert zombie.call("init_transactions")["ok"]
        assert zombie.call("begin")["ok"]
        assert zombie.call("produce", topic=topic_name, value="from the zombie")["ok"]
        assert zombie.call("flush")["ok"]
        zombie.freeze()
        wait_until(
            lambda: psutil.Process(zombie.pid).status() == psutil.STATUS_STOPPED,
            timeout=5,
            what="the zombie to stop (SIGSTOP)",
        )

        successor = Producer(demo_producer_config(bootstrap, sid, **{"transactional.id": txn_id}))
        successor.init_transactions(30)  # bumps the epoch: the zombie's open transaction is aborted
        successor.begin_transaction()
        successor.produce(topic_name, b"from the successor")
        successor.commit_transaction(30)

        zombie.thaw()
        answer = zombie.call("commit")
        assert not answer["ok"] and answer["fatal"] and answer["code"] == "_FENCED", answer
    assert not pid_file.exists()

    zinit = proxy.trace(client_id=zid, api="InitProducerId")[-1]["response"]
    sinits = [r["response"] for r in proxy.trace(client_id=sid, api="InitProducerId")]
    # The coordinator first aborts the zombie's open transaction (bumping the epoch to fence it) and
    # answers CONCURRENT_TRANSACTIONS (again, until the abort markers are written); the successor's
    # retry that succeeds bumps once more: zombie epoch + 2.
    errors = [r["error"] for r in sinits]
    assert len(errors) >= 2 and set(errors[:-1]) == {"CONCURRENT_TRANSACTIONS"} and errors[-1] == "NONE", errors
    assert sinits[-1]["producer_id"] == zinit["producer_id"]
    assert sinits[-1]["producer_epoch"] == zinit["producer_epoch"] + 2
    zproduce = proxy.trace(client_id=zid, api="Produce")[0]["request"]["items"][0]
    assert zproduce["transactional"] and zproduce["producer_epoch"] == zinit["producer_epoch"]
    # The thawed zombie's EndTxn (EndTxn v1 from librdkafka) is refused with INVALID_PRODUCER_EPOCH (47);
    # librdkafka turns that into its fatal _FENCED.
    end = proxy.trace(client_id=zid, api="EndTxn")
    assert [(r["request"]["producer_epoch"], r["response"]["error"]) for r in end] == [
        (zinit["producer_epoch"], "INVALID_PRODUCER_EPOCH")
    ]
