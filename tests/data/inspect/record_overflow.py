"""Record an epoch overflow of one transactional id: run against a live cluster with the proxy up.

    EOSLAB_PORT_OFFSET=2000 .venv/bin/python tests/data/inspect/record_overflow.py FOLDER [ID]

32765 raw InitProducerId requests (one connection to the id's coordinator, ~90 s on 2 cores) take the id
to epoch 32764; the Java client's InitProducerId makes it 32765, and its three commits (TV2: +1 at every
EndTxn) cross the int16 limit: the coordinator moves the id to a new producer id. Writes
``dump_txn_log_overflow.txt`` into FOLDER: the id's ``__transaction_state`` records, its first and last 12
(the rest are the same Empty record at rising epochs).
"""

from __future__ import annotations

import sys
from pathlib import Path

from eoslab import inspect as ins
from eoslab.cluster import Cluster
from eoslab.m03_transactions import lesson as txn
from eoslab.faults import ensure_proxy
from eoslab.java_client import JavaProducer
from eoslab.protocol import KafkaConnection

RAW_INITS = 32765
KEEP = 12


def trimmed(text: str, keep: int = KEEP) -> str:
    """The dump's header lines, then the first and last ``keep`` records (two lines each)."""
    lines = text.splitlines(keepends=True)
    head = [ln for ln in lines[:2] if not ln.startswith(("baseOffset", "|"))]
    body = lines[len(head) :]
    if len(body) <= 4 * keep:
        return text
    return "".join(head + body[: 2 * keep] + body[-2 * keep :])


def main(out: Path, tid: str) -> None:
    cluster = Cluster("local")
    ensure_proxy(cluster)
    topic = f"{tid}-topic"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3]])
    partition = ins.coordinator_partition(tid)
    coordinator = cluster.topology.broker(cluster.leader("__transaction_state", partition))
    body = {"TransactionalId": tid, "TransactionTimeoutMs": 60000, "ProducerId": -1, "ProducerEpoch": -1}
    with KafkaConnection(*coordinator.direct_address(), client_id="eoslab-overflow", timeout=30) as conn:
        for _ in range(RAW_INITS):
            answer = conn.request("InitProducerId", 4, body)
            assert answer["ErrorCode"] == 0, answer
    print("raw InitProducerId: epoch", answer["ProducerEpoch"], "producer id", answer["ProducerId"])
    bootstrap = cluster.bootstrap_servers(proxied=True)
    with JavaProducer({**txn.JAVA_PRODUCER, "bootstrap.servers": bootstrap, "transactional.id": tid}) as j:
        j.init_transactions()
        for i in range(3):
            j.begin_transaction()
            j.send(topic, 0, f"overflow{i}")
            j.commit_transaction()
    txn.wait_settled(cluster, [tid])
    node, folder, names = ins.partition_files(cluster, "__transaction_state", partition, suffix=".log")
    base = cluster.backend.data_path(node)
    files = ",".join(f"{base}/{folder}/{n}" for n in sorted(names))
    text = cluster.tool("dump-log", "--transaction-log-decoder", "--files", files, node=node.name)
    mine = [ln for ln in text.splitlines(keepends=True) if not ln.startswith("|") or f'"{tid}"' in ln]
    # Keep only the id's records (with their batch lines): a batch line precedes each record line.
    kept: list[str] = []
    for i, line in enumerate(mine):
        if line.startswith("baseOffset") and not (i + 1 < len(mine) and mine[i + 1].startswith("|")):
            continue
        kept.append(line)
    (out / "dump_txn_log_overflow.txt").write_text(trimmed("".join(kept)))
    print("recorded", tid, "on", node.name, folder)


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), sys.argv[2] if len(sys.argv) > 2 else "rec-overflow-1")
