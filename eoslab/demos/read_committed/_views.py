"""What each isolation level returns from a written log, offset by offset, and where the LSO stands.

Three sources, each Kafka's own: the log on disk (DumpLogSegments: every batch, the
markers included), two consumers with their isolation level set EXPLICITLY (librdkafka's
default is read_committed, the Java client's and Spark's read_uncommitted), and
ListOffsets (``latest`` answers the high watermark under read_uncommitted, the last
stable offset under read_committed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab.demos._clients import read_values
from eoslab.demos.read_committed._log import WrittenLog

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["offset", "kind", "actor", "producer_id", "fate", "value", "read_uncommitted", "read_committed"]
COLOURS = {
    "committed": "#c8e6c9",
    "aborted": "#ffcdd2",
    "open": "#fff9c4",
    "plain": "#e3f2fd",
    "COMMIT marker": "#a5d6a7",
    "ABORT marker": "#ef9a9a",
}
RETURNED, SKIPPED, WAITS = "returned", "—", "not yet (≥ LSO)"


@dataclass(frozen=True)
class Reads:
    """What each consumer returned (offset -> value) and the two ends ListOffsets gives."""

    read_uncommitted: dict[int, str]
    read_committed: dict[int, str]
    high_watermark: int
    last_stable: int


def read_both(log: WrittenLog) -> Reads:
    """Both isolation levels read the partition from the start, each up to its own end (HW, LSO)."""
    part = log.partition
    ru = {off: v for _, off, v in read_values(log.cluster, log.topic, [part], isolation="read_uncommitted")}
    rc = {off: v for _, off, v in read_values(log.cluster, log.topic, [part], isolation="read_committed")}
    o = ins.partition_offsets(log.cluster, log.topic, part)
    return Reads(ru, rc, o.high_watermark, o.last_stable)


def aborted_read_sentence(log: WrittenLog, handed: list[str]) -> str:
    """Whether a consumer handed its application records of an aborted transaction, in words true on any run.

    Module 04 opens on this anomaly (Jepsen's aborted read, G1a) before the cure: the sentence
    says so only when the values the consumer returned (``handed``) include an aborted one.
    """
    fates = {r.value: r for r in log.records}
    aborted = [v for v in handed if v in fates and fates[v].fate == "aborted"]
    if not aborted:
        return (
            f"This run did not show it: none of the {len(handed)} records the consumer returned is from an "
            "aborted transaction."
        )
    writers = ", ".join(sorted({fates[v].actor for v in aborted}))
    return (
        f"This run showed it: the consumer handed the application {len(handed)} records, {len(aborted)} of them "
        f"from a transaction that {writers} ABORTED ({', '.join(aborted)})."
    )


def actors_by_pid(log: WrittenLog) -> dict[int, str]:
    return {p.eos().producer_id: actor for actor, p in log.producers.items()}


def log_table(log: WrittenLog, reads: Reads | None = None) -> pd.DataFrame:
    """One row per offset of the partition: the record or marker there, its fate, what each level returned."""
    import pandas as pd

    reads = reads or read_both(log)
    pids = actors_by_pid(log)
    records = log.by_offset()
    rows: list[dict[str, Any]] = []
    for b in ins.batches(log.cluster, log.topic, log.partition):
        for off in range(b.base_offset, b.last_offset + 1):
            if b.is_control:
                rows.append(
                    {
                        "offset": off,
                        "kind": "marker",
                        "actor": pids.get(b.producer_id, "?"),
                        "producer_id": b.producer_id,
                        "fate": f"{b.marker} marker",
                        "value": "",
                    }
                )
                continue
            r = records.get(off)
            rows.append(
                {
                    "offset": off,
                    "kind": "record",
                    "actor": r.actor if r else "?",
                    "producer_id": b.producer_id,
                    "fate": r.fate if r else "?",
                    "value": r.value if r else "",
                }
            )
    for row in rows:
        off = row["offset"]
        row["read_uncommitted"] = RETURNED if off in reads.read_uncommitted else SKIPPED
        if off in reads.read_committed:
            row["read_committed"] = RETURNED
        else:
            row["read_committed"] = WAITS if off >= reads.last_stable else SKIPPED
    return pd.DataFrame(rows, columns=COLUMNS)


def styled(table: pd.DataFrame) -> Any:
    """The table coloured by fate (a pandas Styler: JupyterLab shows it as HTML)."""

    def colour(row: pd.Series) -> list[str]:
        c = COLOURS.get(str(row["fate"]), "")
        return [f"background-color: {c}" if c else ""] * len(row)

    return table.style.apply(colour, axis=1).hide(axis="index")


def counts(table: pd.DataFrame, reads: Reads) -> pd.DataFrame:
    """Offsets are not records: how many offsets the partition used, and what each level returned of them."""
    import pandas as pd

    markers = int((table["kind"] == "marker").sum())
    return pd.DataFrame(
        [
            {"what": "offsets used (log end = high watermark)", "count": reads.high_watermark},
            {"what": "of which data records", "count": int((table["kind"] == "record").sum())},
            {"what": "of which transaction markers (control batches)", "count": markers},
            {"what": "records read_uncommitted returned", "count": len(reads.read_uncommitted)},
            {"what": "records read_committed returned", "count": len(reads.read_committed)},
            {"what": "last stable offset (ListOffsets, read_committed)", "count": reads.last_stable},
        ]
    )


def gaps(reads: Reads) -> list[tuple[int, int]]:
    """The runs of offsets below the LSO that read_committed did not return: markers and aborted records."""
    out: list[tuple[int, int]] = []
    prev = -1
    for off in [*sorted(reads.read_committed), reads.last_stable]:
        if off > prev + 1:
            out.append((prev + 1, off - 1))
        prev = off
    return out


@dataclass(frozen=True)
class LsoFacts:
    """The LSO as ListOffsets answers it, beside what the log and the producer state say it should be."""

    high_watermark: int
    last_stable: int
    open_first_offsets: dict[str, int]  # actor -> first offset of its open transaction (from the records)
    describe_producers: dict[int, int | None]  # producer id -> CurrentTransactionStartOffset
    last_committed_read: int | None  # the highest offset the read_committed consumer returned

    @property
    def expected(self) -> int:
        """min(HW, first offset of the earliest open transaction)."""
        return min([self.high_watermark, *self.open_first_offsets.values()])

    @property
    def source_001(self) -> int:
        """A common description's wording, "the offset before the earliest open transaction": one less."""
        return min(self.open_first_offsets.values(), default=self.high_watermark + 1) - 1


def lso_facts(log: WrittenLog, reads: Reads | None = None) -> LsoFacts:
    reads = reads or read_both(log)
    first: dict[str, int] = {}
    for r in log.records:
        if r.fate == "open" and r.offset >= 0:
            first[r.actor] = min(first.get(r.actor, r.offset), r.offset)
    states = ins.describe_producers(log.cluster, log.topic, log.partition)
    return LsoFacts(
        high_watermark=reads.high_watermark,
        last_stable=reads.last_stable,
        open_first_offsets=first,
        describe_producers={s.producer_id: s.current_txn_start_offset for s in states},
        last_committed_read=max(reads.read_committed, default=None),
    )
