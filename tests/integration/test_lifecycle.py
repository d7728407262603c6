"""`down` leaves no JVM behind, and `up` brings the cluster back.

Marked ``last``: the root conftest.py runs it after every other test of tests/ (whatever the file
order), because it stops the whole cluster under the other tests' session-wide clients.
"""

import os
import time
from typing import Any

import psutil
import pytest

from eoslab import clients
from tests.integration._produce import produce_all

pytestmark = [pytest.mark.cluster, pytest.mark.destructive, pytest.mark.last]

EARLIEST: dict[str, Any] = {"auto.offset.reset": "earliest"}  # a consumer setting, passed as **conf


def _kafka_jvms(root):
    """This cluster's JVMs: a file of its folder on their command line (not of kafka-data-gw1 beside it)."""
    found, folder = [], f"{root}{os.sep}"
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "kafka.Kafka" in cmd and any(folder in part for part in cmd):
            found.append(proc.pid)
    return found


def test_down_leaves_no_process_and_up_comes_back(cluster, topic_name):
    root = cluster.backend.root
    assert len(_kafka_jvms(root)) == 6
    # The learner's own topic: `eoslab down` + `eoslab up` (a laptop closed mid-lab) keeps it, with its records.
    cluster.admin.create_topic(topic_name, replica_assignment=[[1, 2, 3]])
    p = clients.producer(cluster)
    produce_all(p, topic_name, [f"kept-{i}".encode() for i in range(5)], partition=0)
    cluster.pause("broker-3")  # even a SIGSTOPped JVM must go
    cluster.down()
    assert _kafka_jvms(root) == []
    assert all(r.state == "stopped" for r in cluster.status())
    cluster.up()
    assert len(_kafka_jvms(root)) == 6
    assert cluster.brokers() == [1, 2, 3]
    assert topic_name in cluster.admin.topics()
    c = clients.consumer(cluster, f"g-{topic_name}", isolation="read_committed", **EARLIEST)
    c.subscribe([topic_name])
    got: list[str] = []
    deadline = time.monotonic() + 60
    while len(got) < 5 and time.monotonic() < deadline:
        msg = c.poll(1.0)
        if msg is not None and not msg.error():
            got.append((msg.value() or b"").decode())
    c.close()
    assert got == [f"kept-{i}" for i in range(5)]
    cluster.admin.delete_topic(topic_name)
