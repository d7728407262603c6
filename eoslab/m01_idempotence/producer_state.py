"""How a restarted broker gets its producer state back: a snapshot, then the log after it.

A replica keeps each producer's state (epoch, last 5 batches) in memory and writes it to
``<offset>.snapshot`` files: when a segment rolls, when the broker shuts down cleanly, and after
a crash recovery. To get the state up to an offset it loads the newest snapshot at or below it
and reads the batches from that snapshot's offset on (``UnifiedLog.rebuildProducerState``).
After a clean stop that is the snapshot at the log end, and nothing is read. After a crash the
broker first re-reads every segment it had not flushed (``LogLoader.recoverLog``): the state up
to the segment's start as above, snapshots past that start deleted, the segment's batches read,
a snapshot written at its end. The broker says so in its own log, one partition at a time (Kafka
4.1.2, logger ``UnifiedLog`` with a ``[LogLoader partition=T-P, ...]`` prefix, and
``ProducerStateManager``)::

    Loading producer state till offset 5
    Reloading from producer snapshot and rebuilding producer state from offset 3
    Loading producer state from snapshot file 'SnapshotFile(offset=3, file=.../00000000000000000003.snapshot)'
    Producer state recovery took 3ms for snapshot load and 0ms for segment recovery from offset 3
    Wrote producer snapshot at offset 5 with 1 producer ids in 5 ms.

Seen on the real cluster: after a SIGKILL, with one segment starting at 0, the broker deleted
its snapshot at offset 7, rebuilt the state from nothing by reading the segment from 0, wrote a
snapshot at the log end (22) and loaded it; after a clean stop the folder already held a snapshot
at the log end, so the restart read no batch at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

LOG_LINES = 200_000
"""How far back to read a broker's log: one start-up writes a few thousand lines."""

_START = re.compile(r"\[BrokerServer id=(\d+)\] Starting broker")
_TIME = re.compile(r"^\[?(?:\d{4}-\d\d-\d\d[ T])?(\d\d:\d\d:\d\d[,.]\d{3})")
_EVENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("state up to offset", re.compile(r"Loading producer state till offset (?P<offset>\d+)")),
    ("rebuild from offset", re.compile(r"rebuilding producer state from offset (?P<offset>\d+)")),
    ("snapshot loaded", re.compile(r"Loading producer state from snapshot file 'SnapshotFile\(offset=(?P<offset>\d+)")),
    (
        "recovered",
        re.compile(
            r"Producer state recovery took (?P<snapshot_ms>\d+)ms for snapshot load and (?P<log_ms>\d+)ms "
            r"for segment recovery from offset (?P<offset>\d+)"
        ),
    ),
    (
        "snapshot written",
        re.compile(r"Wrote producer snapshot at offset (?P<offset>\d+) with (?P<producers>\d+) producer"),
    ),
    ("snapshot deleted", re.compile(r"Deleted producer state snapshot \S*?(?P<offset>\d+)\.snapshot")),
)


@dataclass(frozen=True)
class RecoveryEvent:
    """One line of a broker's log about the producer state of one partition."""

    time: str
    event: str
    offset: int
    detail: str


def _about(line: str, topic: str, partition: int) -> bool:
    tp = f"{topic}-{partition}"
    return f"partition={tp}," in line or f"partition={tp}]" in line or f"/{tp}/" in line


def _last_start(lines: list[str], broker: int | None) -> int:
    """The line at which ``broker`` (any broker if None) last started; 0 without such a line."""
    starts = [
        i for i, ln in enumerate(lines) if (m := _START.search(ln)) and (broker is None or int(m.group(1)) == broker)
    ]
    return starts[-1] if starts else 0


def _event(line: str) -> RecoveryEvent | None:
    """The line as the first of :data:`_EVENTS` it matches."""
    for name, pattern in _EVENTS:
        m = pattern.search(line)
        if m:
            t = _TIME.search(line)
            detail = ", ".join(f"{k}={v}" for k, v in m.groupdict().items() if k != "offset")
            return RecoveryEvent(t.group(1) if t else "", name, int(m.group("offset")), detail)
    return None


def parse_recovery(text: str, topic: str, partition: int, broker: int | None = None) -> list[RecoveryEvent]:
    """The producer-state events of ``topic-partition`` in a broker's log, since its last start.

    ``broker`` names whose ``Starting broker`` line opens the last start (any broker if None);
    without such a line the whole text counts.
    """
    lines = text.splitlines()
    about = (ln for ln in lines[_last_start(lines, broker) :] if _about(ln, topic, partition))
    return [e for e in map(_event, about) if e is not None]


@dataclass
class _Pass:
    """One pass over the producer state: up to which offset, rebuilt from where, from which snapshot."""

    upto: int
    rebuilt: int | None = None
    loaded: int | None = None

    def sentence(self) -> str:
        start = f"the snapshot at {self.loaded}" if self.loaded is not None else "no snapshot (an empty state)"
        read = (
            "nothing left to read"
            if self.rebuilt in (None, self.upto)
            else f"then the batches from {self.rebuilt} to {self.upto}"
        )
        return f"State up to offset {self.upto}: {start}, {read}."


class _Story:
    """The sentences of :func:`explain`, told as the events come."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.current: _Pass | None = None

    def close(self) -> None:
        if self.current is not None:
            self.out.append(self.current.sentence())
        self.current = None

    def state_up_to(self, offset: int) -> None:
        self.close()
        self.current = _Pass(offset)

    def snapshot_written(self, offset: int) -> None:
        since = f"from {self.current.upto} " if self.current is not None else ""
        self.close()
        self.out.append(f"Read the batches {since}up to {offset} and wrote a snapshot at {offset}.")

    def rebuild_from(self, offset: int) -> None:
        if self.current is not None and self.current.rebuilt is None:
            self.current.rebuilt = offset

    def snapshot_loaded(self, offset: int) -> None:
        if self.current is not None:
            self.current.loaded = offset


_TOLD: dict[str, Callable[[_Story, int], None]] = {
    "state up to offset": _Story.state_up_to,
    "snapshot written": _Story.snapshot_written,
    "rebuild from offset": _Story.rebuild_from,
    "snapshot loaded": _Story.snapshot_loaded,
}


def explain(events: Iterable[Any]) -> list[str]:
    """What the broker did, one sentence per pass over the producer state, from :func:`parse_recovery`'s
    events (or the rows of :func:`recovery`'s frame)."""
    rows = [(e.event, int(e.offset)) for e in events]
    story = _Story()
    for event, offset in rows:
        if (tell := _TOLD.get(event)) is not None:
            tell(story, offset)
    story.close()
    deleted = sorted({o for e, o in rows if e == "snapshot deleted"})
    if deleted:
        story.out.append(f"Deleted the snapshot(s) at {', '.join(map(str, deleted))}.")
    return story.out


def recovery(cluster: Cluster, broker: int, topic: str, partition: int) -> pd.DataFrame:
    """What ``broker`` did to rebuild the producer state of ``topic-partition`` at its last start, from its log."""
    import pandas as pd

    text = cluster.logs(f"broker-{broker}", lines=LOG_LINES)
    events = parse_recovery(text, topic, partition, broker)
    return pd.DataFrame([e.__dict__ for e in events], columns=["time", "event", "offset", "detail"])


def explain_frame(frame: pd.DataFrame) -> list[str]:
    """:func:`explain` of :func:`recovery`'s frame."""
    return explain(frame.itertuples(index=False))


def snapshot_offsets(cluster: Cluster, broker: int, topic: str, partition: int) -> list[int]:
    """The offsets of the ``.snapshot`` files of ``topic-partition`` on ``broker`` (their names)."""
    from eoslab import inspect as ins

    _, _, names = ins.partition_files(cluster, topic, partition, broker, suffix=".snapshot")
    return sorted(int(n.split(".")[0]) for n in names)
