"""A benchmark slice's records leave the disk within seconds of being trimmed (the long run once filled it).

DeleteRecords moves the log start offset only; the segments below it are deleted by the broker's retention
check (``log.retention.check.interval.ms``: 5 min by default, 10 s in the topology).
"""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from eoslab._paths import data_dir
from eoslab._wait import wait_until
from eoslab.bench._rounds import TOPIC_CONFIG, _trim
from tests.integration._produce import produce_all

pytestmark = pytest.mark.cluster


def _segments(topic: str) -> dict[str, int]:
    """The ``.log`` segment files of partition 0 on every broker that holds a replica."""
    return {d.parent.parent.name: len(list(d.glob("*.log"))) for d in data_dir().glob(f"broker-*/data/{topic}-0")}


def test_trimmed_segments_leave_every_replica_within_the_retention_check(cluster, topic_name):
    cluster.admin.create_topic(topic_name, partitions=1, config={**TOPIC_CONFIG, "segment.bytes": str(2**20)})
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers(), "acks": "all", "linger.ms": 5})
    value = b"x" * 1024
    produce_all(p, topic_name, [value] * 5000, partition=0)  # ~5 MB: five 1 MB segments

    def each_holds(n: int):
        s = _segments(topic_name)
        return s if len(s) == 3 and all(v == n for v in s.values()) else None

    def each_holds_at_least(n: int):
        s = _segments(topic_name)
        return s if len(s) == 3 and min(s.values()) >= n else None

    wait_until(lambda: each_holds_at_least(4), timeout=30, what="every replica to hold at least 4 segments")
    _trim(cluster, topic_name, 1)
    # the retention check every 10 s, then file.delete.delay.ms (1 s): 30 s is three checks
    seen = wait_until(lambda: each_holds(1), timeout=30, what="the trimmed segments to leave every replica's disk")
    assert seen == {"broker-1": 1, "broker-2": 1, "broker-3": 1}
    cluster.admin.delete_topic(topic_name)
