"""The final read: a topic read from its start to its end at one isolation level, with the end it
reached, so the checker can tell a record the read should have met (lost) from one written past it
(unseen).

The end of a partition is where librdkafka's consumer reported ``_PARTITION_EOF``: the high
watermark for ``read_uncommitted``, the last stable offset (LSO) for ``read_committed``; control
records (the transaction markers) take offsets below it and are never returned.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from eoslab._timeouts import CLIENT_DRAIN, REQUEST
from eoslab._wait import wait_until
from eoslab.history._events import HistoryFormatError, Position, text

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

ISOLATIONS = ("read_committed", "read_uncommitted")

FINAL_READ_TIMEOUT = CLIENT_DRAIN
"""Reading an output topic of a few thousand records from offset 0 takes a second or two; the
rest is room for the leader election that follows a fault the run just healed (NEW_LEADER, 30 s)."""


@dataclass(frozen=True, order=True)
class ReadRecord:
    """A record a final read returned."""

    partition: int
    offset: int
    value: str | None
    key: str | None = None


@dataclass(frozen=True)
class FinalRead:
    """What one reader at ``isolation`` returned of ``topic``, and where each partition's read ended."""

    topic: str
    isolation: str
    records: tuple[ReadRecord, ...]
    ends: dict[int, int]
    """partition -> the offset the read reached (EOF): every offset below it was read or is not visible."""

    def __post_init__(self) -> None:
        if self.isolation not in ISOLATIONS:
            raise HistoryFormatError(f"isolation={self.isolation!r}: use read_committed or read_uncommitted.")

    def at(self, record: ReadRecord) -> Position:
        return Position(self.topic, record.partition, record.offset)

    def positions(self) -> list[Position]:
        """Where each record the read returned is, in order."""
        return [self.at(r) for r in self.records]

    def covers(self, partition: int, offset: int) -> bool:
        """The read went past ``offset`` of ``partition``: a record there it did not return, it cannot see."""
        return offset < self.ends.get(partition, 0)

    def save(self, path: str | os.PathLike[str]) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {**asdict(self), "ends": {str(p): e for p, e in self.ends.items()}}
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        tmp.replace(path)  # a reader never sees half a final read
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> FinalRead:
        try:
            raw = json.loads(Path(path).read_text())
            return cls(
                topic=raw["topic"],
                isolation=raw["isolation"],
                records=tuple(ReadRecord(**r) for r in raw["records"]),
                ends={int(p): int(e) for p, e in raw["ends"].items()},
            )
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise HistoryFormatError(f"{path} is not a final read saved by FinalRead.save ({e}).") from None


def read_final(cluster: Cluster, topic: str, isolation: str, *, timeout: float = FINAL_READ_TIMEOUT) -> FinalRead:
    """Read every partition of ``topic`` from its start until librdkafka reports its end, at ``isolation``.

    Run it after the writers have stopped: a partition's end is taken when the reader first reaches it.
    """
    from confluent_kafka import OFFSET_BEGINNING, KafkaError, TopicPartition

    from eoslab.clients import consumer

    if isolation not in ISOLATIONS:
        raise HistoryFormatError(f"isolation={isolation!r}: use read_committed or read_uncommitted.")
    c = consumer(
        cluster, f"eoslab-final-read-{uuid.uuid4().hex[:8]}", isolation=isolation, **{"enable.partition.eof": True}
    )
    try:
        meta = c.list_topics(topic, timeout=REQUEST).topics.get(topic)
        if meta is None or meta.error is not None or not meta.partitions:
            raise HistoryFormatError(
                f"Topic {topic!r} does not exist on this cluster: read the topic the processors wrote."
            )
        pending = set(meta.partitions)
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in sorted(pending)])
        records: list[ReadRecord] = []
        ends: dict[int, int] = {}

        def drained() -> bool:
            for msg in c.consume(500, timeout=0.5):
                err, part, offset = msg.error(), int(msg.partition() or 0), int(msg.offset() or 0)
                if err is None:
                    records.append(ReadRecord(part, offset, text(msg.value()), text(msg.key())))
                elif err.code() == KafkaError._PARTITION_EOF:
                    if part in pending:
                        ends[part] = offset
                        pending.discard(part)
                elif err.fatal() or not err.retriable():
                    raise HistoryFormatError(f"Reading {topic} at {isolation} failed: {err.str()}.")
            return not pending

        wait_until(
            drained,
            timeout=timeout,
            what=f"a {isolation} read of {topic} to its end",
            interval=0.0,
            describe=lambda: f"partitions not yet at their end: {sorted(pending)}",
            hint="Is a transaction still open on it? read_committed stops at the LSO until it ends.",
            fatal=(HistoryFormatError,),
        )
        return FinalRead(topic, isolation, tuple(sorted(records)), ends)
    finally:
        c.close()


def read_both(cluster: Cluster, topic: str, *, timeout: float = FINAL_READ_TIMEOUT) -> tuple[FinalRead, FinalRead]:
    """The output read twice, ``read_committed`` then ``read_uncommitted`` (the checker wants both)."""
    return (
        read_final(cluster, topic, "read_committed", timeout=timeout),
        read_final(cluster, topic, "read_uncommitted", timeout=timeout),
    )
