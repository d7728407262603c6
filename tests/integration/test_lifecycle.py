"""`down` leaves no JVM behind, and `up` brings the cluster back.

Marked ``last``: the root conftest.py runs it after every other test of tests/ (whatever the file
order), because it stops the whole cluster under the other tests' session-wide clients.
"""

import psutil
import pytest

pytestmark = [pytest.mark.cluster, pytest.mark.destructive, pytest.mark.last]


def _kafka_jvms(root):
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "kafka.Kafka" in cmd and any(str(root) in part for part in cmd):
            found.append(proc.pid)
    return found


def test_down_leaves_no_process_and_up_comes_back(cluster):
    root = cluster.backend.root
    assert len(_kafka_jvms(root)) == 6
    cluster.pause("broker-3")  # even a SIGSTOPped JVM must go
    cluster.down()
    assert _kafka_jvms(root) == []
    assert all(r.state == "stopped" for r in cluster.status())
    cluster.up()
    assert len(_kafka_jvms(root)) == 6
    assert cluster.brokers() == [1, 2, 3]
