"""`eoslab heal` undoes faults and nothing else: the learner's topics, records and notebooks survive it."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

import eoslab
from eoslab import clients
from tests.integration._produce import produce_all

pytestmark = [pytest.mark.cluster, pytest.mark.destructive]

EARLIEST: dict[str, Any] = {"auto.offset.reset": "earliest"}  # a consumer setting, passed as **conf

ROOT = Path(__file__).resolve().parents[2]


def _digests(paths: list[Path]) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _read_all(cluster, topic: str, n: int) -> list[str]:
    c = clients.consumer(cluster, f"g-{topic}", isolation="read_committed", **EARLIEST)
    c.subscribe([topic])
    got: list[str] = []
    deadline = time.monotonic() + 60
    while len(got) < n and time.monotonic() < deadline:
        msg = c.poll(1.0)
        if msg is not None and not msg.error():
            got.append((msg.value() or b"").decode())
    c.close()
    return got


def test_heal_keeps_the_learners_topics_records_and_notebooks(healed, topic_name, tmp_path):
    cluster = healed
    cluster.admin.create_topic(topic_name, replica_assignment=[[2, 3, 1], [3, 1, 2]])
    values = [f"learner-{i}" for i in range(20)]
    p = clients.producer(cluster)
    produce_all(p, topic_name, [{"value": v.encode(), "partition": i % 2} for i, v in enumerate(values)])
    mine = tmp_path / "lab01_idempotence.ipynb"  # the learner's own work, in progress
    nb = json.loads((ROOT / "labs" / "lab01_idempotence.ipynb").read_text())
    nb["cells"][0]["source"] = "my notes: the retry kept the original offset\n"
    mine.write_text(json.dumps(nb))
    course = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "labs").glob("*.ipynb"))
    before = _digests([mine, *course])

    # A lesson left things broken: a broker dead (the leader of one of the learner's partitions), a
    # controller frozen, a proxy fault still armed.
    from eoslab.faults import Proxy

    Proxy.connect(cluster).drop_response(api="Produce", client_id="nobody").inject()
    cluster.kill("broker-2")
    cluster.pause("controller-3")
    eoslab.heal(cluster)  # what every notebook's Setup cell runs

    assert cluster.is_up()
    assert topic_name in cluster.admin.topics()
    assert sorted(_read_all(cluster, topic_name, len(values))) == sorted(values)
    assert _digests([mine, *course]) == before
    cluster.admin.delete_topic(topic_name)
