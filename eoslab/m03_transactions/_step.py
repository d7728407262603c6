"""The evidence of one step of a lesson: what crossed the proxy, what the coordinator logged, what reached the disk.

A :class:`Step` marks where the proxy's trace, the ``__transaction_state``
partitions and the data partitions stood when it began and when it ended, so
its evidence is exactly what happened in between (plus the markers and the
Complete* record of a transaction it was finishing, which the coordinator
writes after the client's call returned).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from eoslab.demos import UNSETTLED, coordinator_state, wait_settled
from eoslab.faults import Trace

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster


TXN_APIS = ("InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "Produce", "TxnOffsetCommit", "EndTxn")
"""The requests a transactional producer's calls send (KIP-98), as the proxy's trace names them."""


class LessonLike(Protocol):
    """What a step needs of its lesson (:class:`~eoslab.m03_transactions.lesson.TransactionLesson`)."""

    cluster: Cluster
    topic: str
    transactional_ids: list[str]

    def mark(self) -> int: ...
    def ends(self) -> dict[tuple[str, int], int]: ...
    def state_ends(self) -> dict[str, int]: ...
    def roles(self) -> dict[int, str]: ...
    def trace(self, since: int = 0, clients: list[str] | None = None) -> Trace: ...
    def diagram(
        self, rows: list[dict[str, Any]], max_events: int = 120, roles: dict[int, str] | None = None
    ) -> str: ...
    def history(
        self, transactional_ids: list[str] | None = None, since: dict[str, int] | None = None
    ) -> pd.DataFrame: ...
    def disk(
        self, since: dict[tuple[str, int], int] | None = None, producers: set[int] | None = None
    ) -> pd.DataFrame: ...


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


@dataclass
class Step:
    """The evidence of one step: what crossed the proxy, what the coordinator logged, what reached the disk."""

    lesson: LessonLike
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

    def txn_requests(self) -> Trace:
        """The step's requests that act on a transaction (:data:`TXN_APIS`). Not FindCoordinator: librdkafka
        also sends that from a timer of its own, 500 ms after it saw the coordinator's connection down
        (``rd_kafka_txn_coord_timer_start``), so one can fall inside any step's window on a busy machine."""
        return Trace(r for r in self.trace if r["api"] in TXN_APIS)

    def init_answers(self) -> list[tuple[str, str, int, int]]:
        """(client, error, producer id, epoch) of every InitProducerId answer in the step, in the trace's order."""
        return [
            (r["client_id"], r["response"]["error"], r["response"]["producer_id"], r["response"]["producer_epoch"])
            for r in self.trace
            if r["api"] == "InitProducerId" and r.get("response")
        ]

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

    def writes(self) -> bool:
        """Could the step have put a batch on disk? (A Produce, an offset commit, or an end that sends markers.)"""
        writing = {"Produce", "TxnOffsetCommit", "EndTxn", "InitProducerId"}  # (an init may fence: ABORT markers)
        return bool(self.settling) or any(r["api"] in writing for r in self.trace)

    def disk(self) -> pd.DataFrame:
        """The batches and markers the step's producers left in A, B and the offsets partition."""
        import pandas as pd

        if not self.writes() and self.end_mark is not None:
            return pd.DataFrame(columns=DISK_COLUMNS)  # nothing to read: spare a JVM start per broker
        if self.settling:  # the markers of the transaction the step was ending are on disk once it settled
            wait_settled(self.lesson.cluster, sorted(self.settling))
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
        # The markers of the transaction the step was ending: the first control batch after the step's end in
        # every partition the step did not close with a marker -- one whose last batch of the step is data, and
        # one the step wrote nothing to (a commit step's own partitions: its data came in earlier steps).
        closed = {
            part for part, g in df[inside].sort_values("base_offset").groupby("partition") if g["is_control"].iloc[-1]
        }
        late = df[~inside & df["is_control"] & ~df["partition"].isin(closed)]
        late = late.sort_values("base_offset").groupby("partition").head(1)
        return df[inside | df.index.isin(late.index)].reset_index(drop=True)

    def show(self) -> None:
        """Display the step's trace diagram, state records and disk view in the notebook."""
        from concurrent.futures import ThreadPoolExecutor

        from IPython.display import Markdown, display

        from eoslab._display import show_mermaid

        with ThreadPoolExecutor(max_workers=2) as pool:  # the log and the data are read by JVMs side by side
            states_f, disk_f = pool.submit(self.states), pool.submit(self.disk)
            display(Markdown(f"**{self.name}: the wire** (client ↔ brokers, through the proxy)"))
            show_mermaid(self.diagram())
            states, disk = states_f.result(), disk_f.result()
        display(Markdown(f"**{self.name}: `__transaction_state`** ({len(states)} record(s) written)"))
        display(states)
        display(Markdown(f"**{self.name}: on disk** ({len(disk)} batch(es) in A, B, `__consumer_offsets`)"))
        display(disk)
