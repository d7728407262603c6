"""The transactions lesson's frame: its ids, its topic, and what each step left as evidence.

A :class:`TransactionLesson` owns one run: a topic whose partition A (0) is led
by broker 1 and B (1) by broker 2, an input topic, a transactional id whose
coordinator is broker 3 and a group whose coordinator is broker 1 (source 000's
diagram), all suffixed with the run id so the notebook can run again.

A :class:`Step` is a ``with`` block around the client calls of one step of the
flow; afterwards it shows what the cluster did during the block: the proxy's
trace of the lesson's clients (as a Mermaid diagram with each broker's role),
the records the coordinator wrote to ``__transaction_state``, and the batches
and markers that reached A, B and the group's ``__consumer_offsets`` partition.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab._wait import wait_until
from eoslab.demos.transactions._arrange import make_coordinator, wait_coordinator
from eoslab.demos.transactions._clients import TxnProducer, consumer, run_id, seed_input, transactional_producer
from eoslab.faults import Proxy, Trace
from eoslab.protocol import KafkaConnection

if TYPE_CHECKING:
    import pandas as pd
    from confluent_kafka import Consumer

    from eoslab.cluster import Cluster

SETTLE_WAIT = 30.0  # markers follow EndTxn in milliseconds; a coordinator failover takes ~5 s (session timeout)
TRANSACTIONAL_ID_NOT_FOUND = 105
UNSETTLED = ("PrepareCommit", "PrepareAbort", "PrepareEpochFence")
STATE_COLUMNS = [
    "transactional_id",
    "offset",
    "state",
    "producer_id",
    "producer_epoch",
    "partitions",
    "client_transaction_version",
    "append_time_ms",
]
DISK_COLUMNS = [
    "partition",
    "base_offset",
    "last_offset",
    "producer_id",
    "producer_epoch",
    "base_sequence",
    "is_transactional",
    "is_control",
    "marker",
    "coordinator_epoch",
    "timestamp",
]


def coordinator_state(cluster: Cluster, transactional_id: str, timeout: float = 5.0) -> str | None:
    """The coordinator's current state of ``transactional_id`` (DescribeTransactions, API 65, in-process).

    ``"Unknown"`` for an id no coordinator knows (TRANSACTIONAL_ID_NOT_FOUND, 105); ``None`` while no
    coordinator answers for it (a failover, a partition still loading).
    """
    c = ins.coordinator(cluster, transactional_id)
    if c.error is not None or not c.reported or c.reported < 0:
        return None
    node = cluster.topology.broker(c.reported)
    with KafkaConnection("127.0.0.1", node.client_port, client_id="eoslab-lesson", timeout=timeout) as conn:
        resp = conn.request("DescribeTransactions", None, {"TransactionalIds": [transactional_id]})
    state = resp["TransactionStates"][0]
    if state["ErrorCode"] == TRANSACTIONAL_ID_NOT_FOUND:
        return "Unknown"
    return None if state["ErrorCode"] else str(state["TransactionState"])


def producer_ids(rows: list[dict[str, Any]]) -> set[int]:
    """Every producer id in these trace rows: granted (InitProducerId, EndTxn v5 answers) or used (Produce)."""
    out: set[int] = set()
    for r in rows:
        resp, req = r.get("response") or {}, r.get("request") or {}
        if r["api"] in ("InitProducerId", "EndTxn") and resp.get("producer_id", -1) >= 0:
            out.add(resp["producer_id"])
        for item in req.get("items") or []:
            if item.get("producer_id", -1) >= 0:
                out.add(item["producer_id"])
        if req.get("producer_id") is not None and req["producer_id"] >= 0:
            out.add(req["producer_id"])
    return out


def wait_settled(cluster: Cluster, transactional_ids: list[str], timeout: float = SETTLE_WAIT) -> None:
    """Until no id is between EndTxn and its last marker (Prepare*): then every marker is on disk."""

    def settled() -> bool:
        return all(coordinator_state(cluster, t) not in (*UNSETTLED, None) for t in transactional_ids)

    wait_until(
        settled,
        timeout=timeout,
        what=f"the coordinators to finish writing markers for {transactional_ids}",
        hint="A transaction stays in PrepareCommit/PrepareAbort while a partition leader is unreachable.",
    )


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


@dataclass
class Step:
    """The evidence of one step: what crossed the proxy, what the coordinator logged, what reached the disk."""

    lesson: TransactionLesson
    name: str
    clients: list[str] | None = None  # only these client ids (default: every lesson client)
    mark: int = 0
    log_start: dict[tuple[str, int], int] = field(default_factory=dict)
    state_start: dict[str, int] = field(default_factory=dict)
    started: float = 0.0
    ended: float | None = None
    end_mark: int | None = None
    log_end: dict[tuple[str, int], int] = field(default_factory=dict)
    state_end: dict[str, int] = field(default_factory=dict)
    settling: set[str] = field(default_factory=set)  # ids whose end was still being written at the step's end
    roles: dict[int, str] | None = None
    _rows: Trace | None = field(default=None, repr=False)

    def __enter__(self) -> Step:
        self.mark = self.lesson.mark()
        self.log_start = self.lesson.ends()
        self.state_start = self.lesson.state_ends()
        self.started = time.time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.ended = time.time()
        self.end_mark = self.lesson.mark()
        # Where the step's evidence ends: the next step's records and batches are not this step's. A
        # transaction the step was ending (PrepareCommit/PrepareAbort at exit) still gets its markers and
        # its Complete* record afterwards: those are counted in (see states() and disk()).
        # (The state first: Complete* is written once every marker is, so ends read after it include them.)
        self.settling = {t for t in self.transactional_ids() if coordinator_state(self.lesson.cluster, t) in UNSETTLED}
        self.log_end = self.lesson.ends()
        self.state_end = self.lesson.state_ends()
        try:
            self.roles = self.lesson.roles()  # who led what when the step ended (a heal may move it back)
        except Exception:  # noqa: BLE001 - a diagram then labels roles as they are when drawn
            self.roles = None

    @property
    def trace(self) -> Trace:
        """The step's trace rows (read once after the step ended, then kept)."""
        if self._rows is not None:
            return self._rows
        rows = self.lesson.trace(self.mark, self.clients)
        if self.end_mark is not None:  # ended: exactly the rows recorded between the two marks
            rows = Trace(r for r in rows if r["id"] <= self.end_mark)
            self._rows = rows
        return rows

    def transactional_ids(self) -> list[str]:
        """The transactional ids whose requests crossed the proxy during the step."""
        seen = [(r.get("request") or {}).get("transactional_id") for r in self.trace]
        return [t for t in dict.fromkeys(seen) if t]

    def eos_trace(self) -> Trace:
        """The step's trace without ApiVersions/Metadata chatter."""
        return Trace(r for r in self.trace if r["api"] not in ("ApiVersions", "Metadata"))

    def diagram(self, max_events: int = 120) -> str:
        """The step's trace as a Mermaid diagram, brokers labelled with their roles at the step's end."""
        return self.lesson.diagram(list(self.trace), max_events=max_events, roles=self.roles)

    def states(self, settle: bool = True) -> pd.DataFrame:
        """The ``__transaction_state`` records the step's ids got (after the markers, if ``settle``)."""
        import pandas as pd

        ids = self.transactional_ids()
        if not ids:
            return pd.DataFrame(columns=STATE_COLUMNS)
        if settle:
            wait_settled(self.lesson.cluster, ids)
        df = self.lesson.history(ids, since=self.state_start)
        if not self.state_end or not len(df):
            return df
        keep = []
        for tid, group in df.groupby("transactional_id", sort=False):
            end = self.state_end.get(tid)
            for i, r in group.sort_values("offset").iterrows():
                if end is None or r["offset"] < end:
                    keep.append(i)
                elif tid in self.settling and str(r["state"]).startswith("Complete"):
                    keep.append(i)  # the end of the transaction the step was finishing
                    break
                else:
                    break
        return df.loc[keep].reset_index(drop=True)

    def disk(self) -> pd.DataFrame:
        """The batches and markers the step's producers left in A, B and the offsets partition."""
        df = self.lesson.disk(self.log_start, producer_ids(self.trace))
        if not self.log_end or not len(df):
            return df
        labels = {
            ("AB"[part] if topic == self.lesson.topic else f"{topic}-{part}"): self.log_end[(topic, part)]
            for topic, part in self.log_end
        }
        inside = df["base_offset"] < df["partition"].map(labels)
        if not self.settling:
            return df[inside].reset_index(drop=True)
        # The markers of the transaction the step was ending: in a partition whose last batch of the step is
        # data (not yet closed by a marker), the first control batch after the step's end.
        open_parts = {
            part
            for part, g in df[inside].sort_values("base_offset").groupby("partition")
            if not g["is_control"].iloc[-1]
        }
        late = df[~inside & df["is_control"] & df["partition"].isin(open_parts)]
        late = late.sort_values("base_offset").groupby("partition").head(1)
        return df[inside | df.index.isin(late.index)].reset_index(drop=True)

    def show(self) -> None:
        """Display the step's trace diagram, state records and disk view in the notebook."""
        from IPython.display import Markdown, display

        from eoslab import show_mermaid

        display(Markdown(f"**{self.name}: the wire** (client ↔ brokers, through the proxy)"))
        show_mermaid(self.diagram())
        states = self.states()
        display(Markdown(f"**{self.name}: `__transaction_state`** ({len(states)} record(s) written)"))
        display(states)
        disk = self.disk()
        display(Markdown(f"**{self.name}: on disk** ({len(disk)} batch(es) in A, B, `__consumer_offsets`)"))
        display(disk)
