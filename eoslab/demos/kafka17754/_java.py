"""KAFKA-17754 with the Java 4.4 client: transaction N's EndTxn delivered again during transaction N+1.

The Java 4.x producer speaks transaction version 2 (KIP-890): EndTxn v5, and every EndTxn answer carries
the next epoch, so a late copy of N's EndTxn names an epoch that is over. The same proxy rule as the
librdkafka variant (:func:`eoslab.demos.kafka17754.delayed_endtxn`) loses the request; the Java client
resends it after request.timeout.ms, and the late copy is delivered while N+1 is open.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab.demos import _kept
from eoslab.demos.kafka17754._librdkafka import LATE_CLIENT, TXN_TIMEOUT_MS, Experiment, send_late_endtxn
from eoslab.demos.pipeline import layout
from eoslab.faults import Proxy
from eoslab.history import check, read_both

if TYPE_CHECKING:
    from eoslab.cluster import Cluster
    from eoslab.history import HistoryWriter
    from eoslab.java_client import JavaProducer

JAVA_REQUEST_TIMEOUT_MS = 5000
"""request.timeout.ms of the Java producer: how long it waits for the lost EndTxn's answer before it
resends (its default is 30 s); delivery.timeout.ms must be at least linger + this."""
JAVA_TRANSACTIONS = 5
JAVA_RECORDS_PER_TXN = 10


def delayed_endtxn_java(cluster: Cluster, *, run_dir: Path | None = None, reuse: bool = False) -> Experiment:
    """The delayed EndTxn with the Java 4.4 client (transaction version 2: every EndTxn bumps the epoch).

    No consumer here: a transactional producer writes JAVA_TRANSACTIONS transactions of numbered records
    (each record's "origin" is its number), and its history is recorded from the client's answers.
    ``reuse``: the last run kept under the runs folder (:mod:`eoslab.demos._kept`), if any; every run is kept."""
    if reuse and (kept := _kept.last("endtxn-java", Experiment, cluster.backend.name)) is not None:
        return kept
    from eoslab.history import HistoryWriter
    from eoslab.java_client import JavaProducer

    proxy = Proxy.connect(cluster)
    name = f"k17754-java-{uuid.uuid4().hex[:6]}"
    plan = layout(cluster, "drop_endtxn_response", name)
    out = f"exp-{name}-out"
    cluster.admin.create_topic(out, replica_assignment=plan.outputs)
    folder = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix=f"eoslab-{name}-"))
    folder.mkdir(parents=True, exist_ok=True)
    run = _JavaRun(exp=Experiment("delayed EndTxn", "Java 4.4 (transaction version 2)"), proxy=proxy, out=out,
                   transactional_id=plan.transactional_id, name=name)  # fmt: skip
    client_id = f"pipeline-{name}"
    history = folder / f"{name}-1.jsonl"
    lost = proxy.drop_request(api="EndTxn", client_id=client_id, nth=2, times=1).inject()
    try:
        with (
            HistoryWriter(history, process=run.process) as h,
            JavaProducer(_config(cluster, client_id, plan.transactional_id), name=name).start() as jp,
        ):
            jp.init_transactions()
            for txn in range(1, JAVA_TRANSACTIONS + 1):
                jp.begin_transaction()
                run.send(jp, h, txn)
                if run.row is not None and not run.exp.late_answer:  # transaction n+1 is open and has written
                    run.send_late_copy(txn)
                if not run.end(jp, h, txn):
                    break
                if run.row is None and (row := lost.applied()) is not None:
                    run.lost(row, txn)
            run.exp.exits.append(0)
    finally:
        proxy.clear_rules(client_id=client_id)
    exp = run.exp
    exp.trace = sorted(
        proxy.trace(client_id=client_id) + proxy.trace(client_id=LATE_CLIENT), key=lambda r: int(r["id"])
    )
    exp.histories = (history,)
    exp.verdict = check(exp.histories, read_both(cluster, out))
    return _kept.keep(exp, "endtxn-java", cluster.backend.name)


def _config(cluster: Cluster, client_id: str, transactional_id: str) -> dict[str, str]:
    return {
        "bootstrap.servers": cluster.bootstrap_servers(proxied=True),
        "client.id": client_id,
        "transactional.id": transactional_id,
        "acks": "all",
        "enable.idempotence": "true",
        "linger.ms": "0",
        "request.timeout.ms": str(JAVA_REQUEST_TIMEOUT_MS),
        "delivery.timeout.ms": str(3 * JAVA_REQUEST_TIMEOUT_MS),
        "transaction.timeout.ms": str(TXN_TIMEOUT_MS),
    }


@dataclass
class _JavaRun:
    """What the Java experiment's loop keeps between transactions: the lost EndTxn's trace row, its number."""

    exp: Experiment
    proxy: Proxy
    out: str
    transactional_id: str
    name: str
    row: dict[str, Any] | None = None
    n: int = 0

    @property
    def process(self) -> str:
        return f"{self.name}-1"

    def send(self, jp: JavaProducer, h: HistoryWriter, txn: int) -> None:
        """Transaction ``txn``'s records, each with its delivery answer written to the history."""
        from eoslab.history import Position, Sent

        values = [f"java|{txn}|{i}|{self.name}" for i in range(JAVA_RECORDS_PER_TXN)]
        for i, v in enumerate(values):
            jp.send(self.out, i % 2, v)
        answer = jp.flush()
        ids = jp.producer_id_and_epoch()
        for i, (v, d) in enumerate(zip(values, answer.get("delivered", []), strict=False)):
            h.write(
                Sent(self.process, time.time(), self.out, i % 2, None if d["error"] else d["offset"], v,
                     source=Position("java-input", 0, (txn - 1) * JAVA_RECORDS_PER_TXN + i), txn=txn,
                     transactional_id=self.transactional_id, producer_id=ids.get("producer_id"),
                     producer_epoch=ids.get("producer_epoch"), error=d["error"])
            )  # fmt: skip

    def send_late_copy(self, txn: int) -> None:
        assert self.row is not None
        self.exp.late_answer = send_late_endtxn(self.proxy, self.row)
        epoch = self.row["request"]["producer_epoch"]
        self.exp.notes.append(
            f"the late copy of transaction {self.n}'s EndTxn v{self.row['version']} (epoch {epoch}) "
            f"delivered during transaction {txn}: {self.exp.late_answer['error']}"
        )

    def end(self, jp: JavaProducer, h: HistoryWriter, txn: int) -> bool:
        """Commit ``txn`` (abort it if the commit fails); False when even the abort failed: the producer stops."""
        result = jp.commit_transaction()
        if result.get("ok"):
            h.committed(txn, [], transactional_id=self.transactional_id)
            return True
        self.exp.notes.append(f"commit of transaction {txn}: {result.get('error')}: {result.get('message')}")
        aborted = jp.abort_transaction()
        if aborted.get("ok"):
            h.aborted(txn, str(result.get("error")), transactional_id=self.transactional_id)
            return True
        self.exp.notes.append(f"abort: {aborted.get('error')}; the producer stops")
        return False

    def lost(self, row: dict[str, Any], txn: int) -> None:
        self.row, self.n = row, txn
        self.exp.late_request = {"broker": row["broker"], "version": row["version"], **row["request"]}
        self.exp.notes.append(
            f"EndTxn(commit) v{row['version']} of transaction {txn} lost on its way; the client resent it"
        )
