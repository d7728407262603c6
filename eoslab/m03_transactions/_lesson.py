"""The transactions lesson's frame: its ids, its topic, and what each step left as evidence.

A :class:`TransactionLesson` owns one run: a topic whose partition A (0) is led
by broker 1 and B (1) by broker 2, an input topic, a transactional id whose
coordinator is broker 3 and a group whose coordinator is broker 1 (so every
diagram of notebook 03 has the same cast), all suffixed with the run id so the
notebook can run again.

A :class:`Step` is a ``with`` block around the client calls of one step of the
flow; afterwards it shows what the cluster did during the block: the proxy's
trace of the lesson's clients (as a Mermaid diagram with each broker's role),
the records the coordinator wrote to ``__transaction_state``, and the batches
and markers that reached A, B and the group's ``__consumer_offsets`` partition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab.demos import TxnProducer, consumer, run_id, seed_input, transactional_producer
from eoslab.faults import Proxy, Trace
from eoslab.m03_transactions._arrange import make_coordinator, wait_coordinator
from eoslab.m03_transactions._step import DISK_COLUMNS, STATE_COLUMNS, Step, producer_ids

if TYPE_CHECKING:
    import pandas as pd
    from confluent_kafka import Consumer

    from eoslab.cluster import Cluster


class TransactionLesson:
    """One run of the transactions lesson (see the module docstring)."""

    def __init__(
        self,
        cluster: Cluster,
        run: str | None = None,
        *,
        txn_coordinator: int = 3,
        group_coordinator: int = 1,
        inputs: int = 10,
    ) -> None:
        self.cluster = cluster
        self.proxy = Proxy.connect(cluster)
        self.run = run or run_id()
        self.topic = f"txn-{self.run}"
        self.input_topic = f"txn-in-{self.run}"
        self.transactional_id = f"my-txn-app-{self.run}"
        self.group = f"my-group-{self.run}"
        self.txn_coordinator, self.group_coordinator = txn_coordinator, group_coordinator
        self.transactional_ids: list[str] = [self.transactional_id]
        cluster.admin.create_topic(self.topic, replica_assignment=[[1, 2, 3], [2, 3, 1]])
        seed_input(cluster, self.input_topic, [f"in-{i}" for i in range(inputs)])
        self._clients: set[str] = set()
        self._newest = 0  # the newest trace row id of this lesson seen so far

    # -- names ----------------------------------------------------------------------------------
    @property
    def offsets_partition(self) -> int:
        """The group's partition of ``__consumer_offsets`` (Java's hash, % 50)."""
        return ins.coordinator_partition(self.group)

    def partitions(self) -> list[tuple[str, int]]:
        """A, B and the group's ``__consumer_offsets`` partition: where this lesson's markers go."""
        return [(self.topic, 0), (self.topic, 1), ("__consumer_offsets", self.offsets_partition)]

    def client(self, name: str) -> str:
        """This run's client id for ``name`` (the proxy's trace is asked per client id)."""
        cid = f"{name}-{self.run}"
        self._clients.add(cid)
        return cid

    # -- clients --------------------------------------------------------------------------------
    def producer(
        self, name: str, transactional_id: str | None = None, conf: dict[str, Any] | None = None
    ) -> TxnProducer:
        """A transactional librdkafka producer of this lesson (through the proxy), not yet initialised."""
        tid = transactional_id or self.transactional_id
        if tid not in self.transactional_ids:
            self.transactional_ids.append(tid)
        return transactional_producer(self.cluster, tid, self.client(name), conf=conf)

    def input_consumer(self) -> Consumer:
        """A consumer of the input topic in the lesson's group: its group metadata goes with the offsets."""
        from confluent_kafka import TopicPartition

        c = consumer(self.cluster, self.group, conf={"client.id": self.client("input")})
        c.assign([TopicPartition(self.input_topic, 0, 0)])
        return c

    # -- step 1 ---------------------------------------------------------------------------------
    def arrange_coordinators(self) -> pd.DataFrame:
        """Broker 3 coordinates the transactional id, broker 1 the group: how, and FindCoordinator's word."""
        import pandas as pd

        rows = []
        for key, kind, want in (
            (self.transactional_id, "transaction", self.txn_coordinator),
            (self.group, "group", self.group_coordinator),
        ):
            moved = make_coordinator(self.cluster, key, kind, want)
            reported = wait_coordinator(self.cluster, key, kind, want)
            rows.append(
                {
                    "key": key,
                    "kind": kind,
                    "String.hashCode": ins.java_string_hash(key),
                    "partition": ins.coordinator_partition(key),
                    "topic": moved.topic,
                    "replicas before": list(moved.replicas_before),
                    "leader before": moved.leader_before,
                    "replicas after": list(moved.replicas_after),
                    "leader after": moved.leader_after,
                    "FindCoordinator": reported,
                }
            )
        return pd.DataFrame(rows)

    # -- evidence -------------------------------------------------------------------------------
    def mark(self) -> int:
        """The id of this lesson's newest trace row: its rows after it belong to what comes next.

        (Row ids grow across every client of the proxy, so any later row of ours has a larger id.)
        """
        rows = self.trace(since=self._newest)
        self._newest = max((r["id"] for r in rows), default=self._newest)
        return self._newest

    def trace(self, since: int = 0, clients: list[str] | None = None) -> Trace:
        """The trace rows of this lesson's clients (or of ``clients``) after row ``since``, oldest first."""
        rows = [r for c in sorted(clients or self._clients) for r in self.proxy.trace(client_id=c, since=since)]
        return Trace(sorted(rows, key=lambda r: r["id"]))

    def roles(self) -> dict[int, str]:
        """What each broker is to this lesson now: leader of A/B, coordinator of the id / the group."""
        roles: dict[int, list[str]] = {b.node_id: [] for b in self.cluster.topology.brokers}
        for p in self.cluster.partitions(self.topic):
            if p.leader in roles:
                roles[p.leader].append(f"leader of {'AB'[p.partition]}")
        for key, kind, label in (
            (self.group, "group", "group coordinator"),
            (self.transactional_id, "transaction", "txn coordinator"),
        ):
            leader = self.cluster.leader(
                "__consumer_offsets" if kind == "group" else "__transaction_state", ins.coordinator_partition(key)
            )
            if leader in roles:
                roles[leader].append(label)
        return {b: ", ".join(r) for b, r in roles.items()}

    def diagram(self, rows: list[dict[str, Any]], max_events: int = 120, roles: dict[int, str] | None = None) -> str:
        """The trace as a Mermaid sequence diagram whose brokers say what they are to this lesson
        (``roles``: as they were when the rows were recorded; default: now)."""
        text = Trace(rows).mermaid(max_events=max_events)
        for broker, role in (self.roles() if roles is None else roles).items():
            if role:
                text = text.replace(f"as Broker {broker}\n", f"as Broker {broker}<br/>({role})\n")
        return text

    def step(self, name: str, clients: list[str] | None = None) -> Step:
        """``with lesson.step("commit") as s: ...`` then ``s.show()``.

        ``clients`` (client ids) narrows the step's evidence to those clients; by
        default it is every lesson client that sent a request during the step.
        """
        return Step(self, name, clients=clients)

    def producer_ids(self) -> set[int]:
        """Every producer id the lesson's clients were given (see :func:`producer_ids`)."""
        return producer_ids(self.trace())

    def history(self, transactional_ids: list[str] | None = None, since: dict[str, int] | None = None) -> pd.DataFrame:
        """What the coordinators wrote to ``__transaction_state`` for the lesson's ids, oldest first."""
        import pandas as pd

        ids = transactional_ids or self.transactional_ids
        found = ins.transaction_histories(self.cluster, ids, since)
        rows = [e for t in ids for e in found[t]]
        df = ins.frame(rows, STATE_COLUMNS)
        if not len(df):
            return pd.DataFrame(columns=STATE_COLUMNS)
        return df[STATE_COLUMNS].astype({"client_transaction_version": "Int64"})

    def disk(self, since: dict[tuple[str, int], int] | None = None, producers: set[int] | None = None) -> pd.DataFrame:
        """Batch headers (data and markers) in A, B and the group's offsets partition.

        Only batches of ``producers`` (default: every producer id of this lesson), from ``since``.
        """
        import pandas as pd

        ours = self.producer_ids() if producers is None else producers
        rows = []
        for (topic, part), found in ins.batches_of(self.cluster, self.partitions()).items():
            label = "AB"[part] if topic == self.topic else f"{topic}-{part}"
            for b in found:
                if b.base_offset < (since or {}).get((topic, part), 0):
                    continue
                if b.producer_id not in ours:
                    continue  # another producer's (other groups' commits share the offsets partition)
                rows.append({"partition": label, **{k: getattr(b, k) for k in DISK_COLUMNS[1:]}})
        return pd.DataFrame(rows, columns=DISK_COLUMNS).astype({"coordinator_epoch": "Int64"})

    def ends(self) -> dict[tuple[str, int], int]:
        """High watermarks of the lesson's partitions now (a step's disk view starts there)."""
        out = {}
        for topic, part in self.partitions():
            out[(topic, part)] = ins.partition_offsets(self.cluster, topic, part).high_watermark
        return out

    def state_ends(self) -> dict[str, int]:
        """The next ``__transaction_state`` offset of each id's partition (a step's history starts there)."""
        out = {}
        for tid in self.transactional_ids:
            part = ins.coordinator_partition(tid)
            out[tid] = ins.partition_offsets(self.cluster, "__transaction_state", part).high_watermark
        return out
