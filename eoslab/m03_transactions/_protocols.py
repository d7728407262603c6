"""Two transaction protocols on one cluster: librdkafka 2.x (the original, KIP-98) and Java 4.4 (KIP-890, TV2).

The same three transactions (records to A and B plus an input offset; commit,
commit, abort) run once with each client, both through the proxy, each with
its own transactional id and group. What differs is on the wire and on disk:

========================  =============================  ==========================================
                          librdkafka 2.x                 Java 4.4 client, transaction.version=2
========================  =============================  ==========================================
partitions enrolled by    AddPartitionsToTxn v0          the partition leader, on Produce v12+
offsets enrolled by       AddOffsetsToTxn v0             the group coordinator, on TxnOffsetCommit v6
TxnOffsetCommit           v3, topic names                v6, topic ids (KIP-1319; v5 in 4.1)
Produce                   v10, topic names               v13, topic ids (KIP-516)
EndTxn                    v1                             v5, answered with a bumped epoch
epoch                     changes when fenced or bumped  +1 at every commit or abort
========================  =============================  ==========================================

(The versions are what the trace of the pinned releases shows; the tests assert them.)
The two enrolments that TV2 moves off the client are broker-to-broker
requests: the proxy cannot see them, a new blind spot.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab.demos import JAVA_PRODUCER, consumer, wait_settled
from eoslab.java_client import JavaProducer
from eoslab.m03_transactions._step import Step, producer_ids

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.m03_transactions._lesson import TransactionLesson

PLAN = ("commit", "commit", "abort")


def java_producer(lesson: TransactionLesson, name: str, transactional_id: str) -> JavaProducer:
    """A Java 4.4 transactional producer of this lesson, through the proxy (started, not initialised)."""
    if transactional_id not in lesson.transactional_ids:
        lesson.transactional_ids.append(transactional_id)
    conf = {
        **JAVA_PRODUCER,
        "bootstrap.servers": lesson.cluster.bootstrap_servers(proxied=True),
        "client.id": lesson.client(name),
        "transactional.id": transactional_id,
    }
    return JavaProducer(conf, name="java-producer").start()


@dataclass
class TwoClients:
    """The same transactions, once per client: their steps (trace, states, disk) side by side."""

    lesson: TransactionLesson
    steps: dict[str, Step]  # "librdkafka" / "java" -> its step
    transactional_ids: dict[str, str]
    plan: tuple[str, ...]
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def diagram(self, client: str) -> str:
        """The Mermaid diagram of one client's run ("librdkafka" or "java")."""
        return self.steps[client].diagram()

    def versions(self) -> pd.DataFrame:
        """How many requests of each API and version each client sent (no ApiVersions/Metadata)."""
        import pandas as pd

        counts: dict[tuple[str, str], dict[str, int]] = {}
        for client, step in self.steps.items():
            for r in step.eos_trace():
                if r["api"] == "FindCoordinator":
                    continue
                key = (r["api"], f"v{r['version']}")
                counts.setdefault(key, {c: 0 for c in self.steps})[client] += 1
        rows = [{"api": a, "version": v, **c} for (a, v), c in sorted(counts.items())]
        return pd.DataFrame(rows)

    def finalized_features(self) -> dict[str, dict[str, int]]:
        """The feature levels each client was told in ApiVersions (through the proxy: tagged fields kept)."""
        out = {}
        for client, step in self.steps.items():
            for r in step.trace:
                resp = r.get("response") or {}
                if r["api"] == "ApiVersions" and "finalized_features" in resp:
                    out[client] = resp["finalized_features"]
                    break
        return out

    def end_txn(self) -> pd.DataFrame:
        """Each EndTxn: version, epoch sent, epoch answered (TV2 answers with the bumped one)."""
        import pandas as pd

        rows = []
        for client, step in self.steps.items():
            for r in step.eos_trace():
                if r["api"] == "EndTxn":
                    resp = r.get("response") or {}
                    rows.append(
                        {
                            "client": client,
                            "version": r["version"],
                            "end": "COMMIT" if r["request"]["committed"] else "ABORT",
                            "epoch sent": r["request"]["producer_epoch"],
                            "epoch answered": resp.get("producer_epoch"),
                            "error": resp.get("error"),
                        }
                    )
        return pd.DataFrame(rows)

    def states(self) -> pd.DataFrame:
        """Each id's ``__transaction_state`` records: state, epoch, clientTransactionVersion (one read for both)."""
        if "states" not in self._cache:
            ids = list(self.transactional_ids.values())
            wait_settled(self.lesson.cluster, ids)
            df = self.lesson.history(ids)
            client_of = {t: c for c, t in self.transactional_ids.items()}
            df = df.assign(client=df["transactional_id"].map(client_of))
            cols = ["client", "offset", "state", "producer_id", "producer_epoch", "client_transaction_version"]
            self._cache["states"] = df[cols].reset_index(drop=True)
        return self._cache["states"]

    def disk(self) -> pd.DataFrame:
        """Each client's batches and markers in A and B (one read for both)."""
        if "disk" not in self._cache:
            owner = {pid: c for c, step in self.steps.items() for pid in producer_ids(step.trace)}
            start = {tp: min(s.log_start.get(tp, 0) for s in self.steps.values()) for tp in self.lesson.partitions()}
            df = self.lesson.disk(start, set(owner))
            df = df[df["partition"].isin(["A", "B"])]
            df = df.assign(client=df["producer_id"].map(owner))
            cols = ["client", "partition", "base_offset", "producer_id", "producer_epoch", "base_sequence", "marker"]
            order = {c: i for i, c in enumerate(self.steps)}
            df = df.sort_values(
                ["client", "partition", "base_offset"], key=lambda c: c.map(order) if c.name == "client" else c
            )
            self._cache["disk"] = df[cols].reset_index(drop=True)
        return self._cache["disk"]


def _librdkafka(lesson: TransactionLesson, tid: str, plan: tuple[str, ...]) -> None:
    from confluent_kafka import TopicPartition

    p = lesson.producer("librdkafka", transactional_id=tid)
    group = consumer(lesson.cluster, f"{lesson.group}-librdkafka", conf={"client.id": lesson.client("librdkafka-in")})
    try:
        p.init_transactions(30)
        for i, end in enumerate(plan):
            p.begin_transaction()
            p.produce(lesson.topic, f"librdkafka {i}".encode(), partition=0)
            p.produce(lesson.topic, f"librdkafka {i}".encode(), partition=1)
            offsets = [TopicPartition(lesson.input_topic, 0, i + 1)]
            p.send_offsets_to_transaction(offsets, group.consumer_group_metadata(), 30)
            p.flush(30)  # an abort drops what is still queued: flushed, both clients leave the same disk
            (p.commit_transaction if end == "commit" else p.abort_transaction)(30)
    finally:
        group.close()


def _java(lesson: TransactionLesson, tid: str, plan: tuple[str, ...]) -> None:
    from eoslab._progress import progress_bar
    from eoslab.java_client import JavaClientError

    calls = 1 + 6 * len(plan)  # init, then begin, two sends, offsets, flush, end per transaction
    with java_producer(lesson, "java", tid) as j, progress_bar("the Java producer's calls", total=calls) as bar:
        for answer in _java_calls(lesson, j, plan):
            if not answer.get("ok"):
                raise JavaClientError(f"The Java producer answered {answer}.")
            bar.update(1)


def _java_calls(lesson: TransactionLesson, j: JavaProducer, plan: tuple[str, ...]) -> Any:
    yield j.init_transactions()
    for i, end in enumerate(plan):
        yield j.begin_transaction()
        yield j.send(lesson.topic, 0, f"java {i}")
        yield j.send(lesson.topic, 1, f"java {i}")
        yield j.send_offsets_to_transaction(f"{lesson.group}-java", lesson.input_topic, 0, i + 1)
        yield j.flush()
        yield j.commit_transaction() if end == "commit" else j.abort_transaction()


def two_protocols(lesson: TransactionLesson, plan: tuple[str, ...] = PLAN) -> TwoClients:
    """Run ``plan`` with the librdkafka producer, then with the Java 4.4 producer; keep both steps."""
    tids = {"librdkafka": f"{lesson.transactional_id}-librdkafka", "java": f"{lesson.transactional_id}-java"}
    steps = {}
    with lesson.step("librdkafka 2.x", clients=[lesson.client("librdkafka")]) as steps["librdkafka"]:
        _librdkafka(lesson, tids["librdkafka"], plan)
    with lesson.step("Java 4.4", clients=[lesson.client("java")]) as steps["java"]:
        _java(lesson, tids["java"], plan)
    return TwoClients(lesson, steps, tids, plan)
