"""KAFKA-17754 with the Java 4.1 client: transaction N's EndTxn delivered again during transaction N+1.

The Java 4.x producer speaks transaction version 2 (KIP-890): EndTxn v5, and every EndTxn answer carries
the next epoch, so a late copy of N's EndTxn names an epoch that is over. The same proxy rule as the
librdkafka variant (:func:`eoslab.demos.kafka17754.delayed_endtxn`) loses the request; the Java client
resends it after request.timeout.ms, and the late copy is delivered while N+1 is open.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab.demos.kafka17754 import LATE_CLIENT, TXN_TIMEOUT_MS, Experiment, send_late_endtxn
from eoslab.demos.pipeline import layout
from eoslab.faults import Proxy
from eoslab.history import check, read_both

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

JAVA_REQUEST_TIMEOUT_MS = 5000
"""request.timeout.ms of the Java producer: how long it waits for the lost EndTxn's answer before it
resends (its default is 30 s); delivery.timeout.ms must be at least linger + this."""
JAVA_TRANSACTIONS = 5
JAVA_RECORDS_PER_TXN = 10


def delayed_endtxn_java(cluster: Cluster, *, run_dir: Path | None = None) -> Experiment:
    """The delayed EndTxn with the Java 4.1 client (transaction version 2: every EndTxn bumps the epoch).

    No consumer here: a transactional producer writes JAVA_TRANSACTIONS transactions of numbered records
    (each record's "origin" is its number), and its history is recorded from the client's answers."""
    from eoslab.history import HistoryWriter, Position, Sent
    from eoslab.java_client import JavaProducer

    proxy = Proxy.connect(cluster)
    name = f"k17754-java-{uuid.uuid4().hex[:6]}"
    plan = layout(cluster, "drop_endtxn_response", name)
    out = f"exp-{name}-out"
    cluster.admin.create_topic(out, replica_assignment=plan.outputs)
    folder = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix=f"eoslab-{name}-"))
    folder.mkdir(parents=True, exist_ok=True)
    process = f"{name}-1"
    client_id = f"pipeline-{name}"
    exp = Experiment("delayed EndTxn", "Java 4.1 (transaction version 2)")
    history = folder / f"{name}-1.jsonl"
    config = {
        "bootstrap.servers": cluster.bootstrap_servers(proxied=True),
        "client.id": client_id,
        "transactional.id": plan.transactional_id,
        "acks": "all",
        "enable.idempotence": "true",
        "linger.ms": "0",
        "request.timeout.ms": str(JAVA_REQUEST_TIMEOUT_MS),
        "delivery.timeout.ms": str(3 * JAVA_REQUEST_TIMEOUT_MS),
        "transaction.timeout.ms": str(TXN_TIMEOUT_MS),
    }
    lost = proxy.drop_request(api="EndTxn", client_id=client_id, nth=2, times=1).inject()
    n = 0
    try:
        with HistoryWriter(history, process=process) as h, JavaProducer(config, name=name).start() as jp:
            jp.init_transactions()
            row: dict[str, Any] | None = None
            for txn in range(1, JAVA_TRANSACTIONS + 1):
                jp.begin_transaction()
                values = [f"java|{txn}|{i}|{name}" for i in range(JAVA_RECORDS_PER_TXN)]
                for i, v in enumerate(values):
                    jp.send(out, i % 2, v)
                answer = jp.flush()
                ids = jp.producer_id_and_epoch()
                for i, (v, d) in enumerate(zip(values, answer.get("delivered", []), strict=False)):
                    h.write(
                        Sent(process, time.time(), out, i % 2, None if d["error"] else d["offset"], v,
                             source=Position("java-input", 0, (txn - 1) * JAVA_RECORDS_PER_TXN + i), txn=txn,
                             transactional_id=plan.transactional_id, producer_id=ids.get("producer_id"),
                             producer_epoch=ids.get("producer_epoch"), error=d["error"])
                    )  # fmt: skip
                if row is not None and not exp.late_answer:  # transaction n+1 is open and has written: now
                    exp.late_answer = send_late_endtxn(proxy, row)
                    epoch = row["request"]["producer_epoch"]
                    exp.notes.append(
                        f"the late copy of transaction {n}'s EndTxn v{row['version']} (epoch {epoch}) "
                        f"delivered during transaction {txn}: {exp.late_answer['error']}"
                    )
                result = jp.commit_transaction()
                if result.get("ok"):
                    h.committed(txn, [], transactional_id=plan.transactional_id)
                else:
                    exp.notes.append(f"commit of transaction {txn}: {result.get('error')}: {result.get('message')}")
                    aborted = jp.abort_transaction()
                    if aborted.get("ok"):
                        h.aborted(txn, str(result.get("error")), transactional_id=plan.transactional_id)
                    else:
                        exp.notes.append(f"abort: {aborted.get('error')}; the producer stops")
                        break
                if row is None and (row := lost.applied()) is not None:
                    n = txn
                    exp.late_request = {"broker": row["broker"], "version": row["version"], **row["request"]}
                    exp.notes.append(
                        f"EndTxn(commit) v{row['version']} of transaction {n} lost on its way; the client resent it"
                    )
            exp.exits.append(0)
    finally:
        proxy.clear_rules(client_id=client_id)
    exp.trace = sorted(
        proxy.trace(client_id=client_id) + proxy.trace(client_id=LATE_CLIENT), key=lambda r: int(r["id"])
    )
    exp.histories = (history,)
    exp.verdict = check(exp.histories, read_both(cluster, out))
    return exp
