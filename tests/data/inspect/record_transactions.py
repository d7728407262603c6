"""Record the transaction outputs the unit tests parse: run against a live cluster with the proxy up.

    EOSLAB_PORT_OFFSET=2000 .venv/bin/python tests/data/inspect/record_transactions.py [FOLDER]

Writes into FOLDER (default: beside this file; ``kafka-4.4.0/`` holds the 4.4.0 recording; README.md says
what each file holds):
``dump_txn_log_tv2.txt``, ``dump_markers_tv2.txt``, ``dump_txnindex.txt``,
``features_describe.txt``, ``api_versions_v4.json`` and ``api_versions_v4_response.hex``.
"""

from __future__ import annotations

import json
import struct
import sys
import time
import uuid
from pathlib import Path

from eoslab import inspect as ins
from eoslab.cluster import Cluster
from eoslab.m03_transactions import lesson as txn
from eoslab.faults import ZombieProducer, ensure_proxy
from eoslab.java_client import JavaProducer
from eoslab.protocol import KafkaConnection, encode_request

HERE = Path(__file__).resolve().parent
OUT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE


def dump_text(cluster: Cluster, broker: int, paths: list[tuple[str, str]], *flags: str) -> str:
    node = cluster.topology.broker(broker)
    base = cluster.backend.data_path(node)
    files = ",".join(f"{base}/{folder}/{name}" for folder, name in paths)
    return cluster.tool("dump-log", *flags, "--files", files, node=node.name)


def segment_files(cluster: Cluster, topic: str, partition: int, suffix: str) -> tuple[int, list[tuple[str, str]]]:
    node, folder, names = ins.partition_files(cluster, topic, partition, suffix=suffix)
    return node.node_id, [(folder, n) for n in sorted(names)]


def main() -> None:
    cluster = Cluster("local")
    ensure_proxy(cluster)
    run = uuid.uuid4().hex[:6]
    topic = f"rec-tv2-{run}"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    bootstrap = cluster.bootstrap_servers(proxied=True)

    # 1. librdkafka: commit, abort, abort (two .txnindex entries in partition 0).
    rd = txn.transactional_producer(cluster, f"rec-rdkafka-{run}")
    rd.init_transactions(30)
    for i, end in enumerate(("commit", "abort", "abort")):
        rd.begin_transaction()
        rd.produce(topic, f"rd{i}".encode(), partition=0)
        rd.produce(topic, f"rd{i}".encode(), partition=1)
        rd.flush(30)  # an abort drops what is still in the client's queue: flush, so the data is on disk
        (rd.commit_transaction if end == "commit" else rd.abort_transaction)(30)

    # 2. The Java client (TV2): commit, commit, abort.
    jtid = f"rec-java-{run}"
    with JavaProducer(
        {**txn.JAVA_PRODUCER, "bootstrap.servers": bootstrap, "client.id": jtid, "transactional.id": jtid}
    ) as j:
        j.init_transactions()
        for i, end in enumerate(("commit", "commit", "abort")):
            j.begin_transaction()
            j.send(topic, 0, f"java{i}")
            j.send(topic, 1, f"java{i}")
            j.flush()
            j.commit_transaction() if end == "commit" else j.abort_transaction()

    # 3. A fenced zombie (librdkafka) and 4. a transaction the coordinator timed out.
    ztid = f"rec-zombie-{run}"
    conf = {**txn.TXN_PRODUCER, "bootstrap.servers": bootstrap, "transactional.id": ztid, "client.id": ztid}
    with ZombieProducer(conf) as z:
        for op, args in (("init_transactions", {}), ("begin", {}), ("produce", {"topic": topic, "partition": 0})):
            z.call(op, **args)
        z.call("flush")
        z.freeze()
        successor = txn.transactional_producer(cluster, ztid, f"{ztid}-successor")
        successor.init_transactions(60)
        z.thaw()
    htid = f"rec-hung-{run}"
    hung = txn.transactional_producer(
        cluster,
        htid,
        conf={"transaction.timeout.ms": 2000, "message.timeout.ms": 2000, "socket.timeout.ms": 2000},
    )
    hung.init_transactions(30)
    hung.begin_transaction()
    hung.produce(topic, b"hung", partition=1)
    hung.flush(30)
    while txn.coordinator_state(cluster, htid) != "CompleteAbort":
        time.sleep(0.2)
    txn.wait_settled(cluster, [f"rec-rdkafka-{run}", jtid, ztid, htid])

    parts = sorted({ins.coordinator_partition(t) for t in (f"rec-rdkafka-{run}", jtid, ztid, htid)})
    by_broker: dict[int, list[tuple[str, str]]] = {}
    for p in parts:
        b, files = segment_files(cluster, "__transaction_state", p, ".log")
        by_broker.setdefault(b, []).extend(files)
    (OUT / "dump_txn_log_tv2.txt").write_text(
        "".join(dump_text(cluster, b, f, "--transaction-log-decoder") for b, f in sorted(by_broker.items()))
    )
    b, files = segment_files(cluster, topic, 0, ".log")
    (OUT / "dump_markers_tv2.txt").write_text(dump_text(cluster, b, files, "--deep-iteration", "--print-data-log"))
    b, files = segment_files(cluster, topic, 0, ".txnindex")
    (OUT / "dump_txnindex.txt").write_text(dump_text(cluster, b, files))
    (OUT / "features_describe.txt").write_text(
        cluster.tool("features", "--bootstrap-server", "{bootstrap}", "describe")
    )

    node = cluster.topology.broker(1)
    body = {"ClientSoftwareName": "eoslab", "ClientSoftwareVersion": "0"}
    with KafkaConnection("127.0.0.1", node.client_port) as conn:
        decoded = conn.request("ApiVersions", 4, body)
    (OUT / "api_versions_v4.json").write_text(json.dumps(decoded, indent=1) + "\n")
    # The raw answer, exactly as the broker sent it (the proxy unit test replays it through the engine).
    import socket

    frame = encode_request("ApiVersions", 4, 7, "eoslab-rec", body)
    with socket.create_connection(("127.0.0.1", node.client_port), timeout=5) as s:
        s.sendall(frame)
        size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
        payload = s.recv(size, socket.MSG_WAITALL)
    (OUT / "api_versions_v4_response.hex").write_text((struct.pack(">i", size) + payload).hex() + "\n")
    print("recorded; ids:", f"rec-rdkafka-{run}", jtid, ztid, htid, "topic", topic)


if __name__ == "__main__":
    main()
