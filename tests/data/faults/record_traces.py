"""Record the trace files the unit tests render: run against a live cluster with the proxy up.

    EOSLAB_PORT_OFFSET=1000 .venv/bin/python tests/data/faults/record_traces.py

Writes ``txn_trace.json`` (a librdkafka transaction) and ``lost_ack_trace.json``
(an idempotent producer whose first ack the proxy dropped) beside this file.
"""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

from confluent_kafka import Producer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "integration"))

from test_faults_trace import run_transaction  # noqa: E402

from eoslab.cluster import Cluster  # noqa: E402
from eoslab.faults import Proxy, demo_producer_config, ensure_proxy  # noqa: E402


def main() -> None:
    cluster = Cluster("local")
    ensure_proxy(cluster)
    proxy = Proxy(cluster.topology)
    cid = f"rec-txn-{uuid.uuid4().hex[:6]}"
    run_transaction(cluster, f"rec-txn-{uuid.uuid4().hex[:6]}", cid, f"{cid}-group")
    (HERE / "txn_trace.json").write_text(json.dumps(list(proxy.trace(client_id=cid)), indent=1) + "\n")

    cid = f"rec-ack-{uuid.uuid4().hex[:6]}"
    topic = f"rec-ack-{uuid.uuid4().hex[:6]}"
    cluster.admin.create_topic(topic, partitions=1)
    producer = Producer(demo_producer_config(cluster.bootstrap_servers(proxied=True), cid))
    with proxy.drop_response(api="Produce", client_id=cid, close=True):
        producer.produce(topic, b"one")
        producer.flush(30)
    (HERE / "lost_ack_trace.json").write_text(json.dumps(list(proxy.trace(client_id=cid)), indent=1) + "\n")


if __name__ == "__main__":
    main()
