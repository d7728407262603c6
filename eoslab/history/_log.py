"""History files: JSON lines, one event per line, appended with one ``write`` each.

Why lines: a processor the course kills with SIGKILL loses at most the line it was writing. Each
line goes to the kernel in a single ``os.write`` (no user-space buffer), so a killed process leaves
every earlier line on disk; ``durable=True`` adds an ``fsync`` per line for a machine crash, which
the course does not cause. The reader drops a torn last line and says so; a bad line anywhere else
is a broken file, not a crash, and raises :class:`HistoryFormatError`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from eoslab.history._events import (
    Aborted,
    Assigned,
    Committed,
    Event,
    Failed,
    HistoryFormatError,
    Polled,
    Position,
    Sent,
    decode,
    text,
    to_json,
)


@dataclass
class History:
    """The events of one history file, in the order the process wrote them."""

    events: list[Event]
    path: Path | None = None
    torn_tail: str | None = None
    """The unfinished last line a killed process left, dropped (``None``: the file ended cleanly)."""
    processes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.processes:
            self.processes = tuple(dict.fromkeys(e.process for e in self.events))

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __len__(self) -> int:
        return len(self.events)


def read_history(path: str | os.PathLike[str]) -> History:
    """The events in ``path``; a torn LAST line (the process was killed mid-write) is dropped and
    kept in :attr:`History.torn_tail`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise HistoryFormatError(f"No history at {path}: start the processor with that history path first.") from None
    lines = data.split(b"\n")
    # A file written to the end finishes with "\n", so the last piece is empty; anything else there is torn.
    last = lines.pop()
    events: list[Event] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            event = decode(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            event = str(e)
        if isinstance(event, str):
            raise HistoryFormatError(
                f"{path} line {number} is not a history event ({event}): only its last line may be torn, "
                "so this file was edited or written by something else than eoslab.history.HistoryWriter."
            )
        events.append(event)
    torn = last.decode("utf-8", "replace") if last.strip() else None
    if torn is not None:
        tail = decode(torn)  # a complete event without its newline (killed between the two) is still an event
        if not isinstance(tail, str):
            events.append(tail)
            torn = None
    return History(events, path=path, torn_tail=torn)


class HistoryWriter:
    """Appends events to a history file, one ``os.write`` per line.

    ``process`` names this incarnation of the processor and must be unique across the run: a
    restarted processor is a new process (its transactions are numbered afresh), e.g.
    ``f"eos-{os.getpid()}"``.

    >>> with HistoryWriter("runs/h/eos-1.jsonl", process="eos-1") as h:
    ...     h.polled(msg)                     # a record the consumer returned
    ...     producer.produce(..., on_delivery=lambda err, m: h.delivered(err, m, source=src, txn=n))
    ...     producer.commit_transaction(30)
    ...     h.committed(n, offsets)
    """

    def __init__(self, path: str | os.PathLike[str], *, process: str, durable: bool = False) -> None:
        self.path = Path(path)
        self.process = process
        self.durable = durable
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    @staticmethod
    def now() -> float:
        """The time events carry: wall-clock seconds, comparable across the processes of one machine."""
        return time.time()

    def write(self, event: Event) -> None:
        if self._fd is None:
            raise HistoryFormatError(f"The history writer of {self.path} is closed: open a new HistoryWriter.")
        os.write(self._fd, (to_json(event) + "\n").encode("utf-8"))
        if self.durable:
            os.fsync(self._fd)

    # The calls a processor makes, fed with what confluent-kafka hands it (a Message, a KafkaError,
    # TopicPartitions): one per event kind, each stamped with this process and the time.

    def polled(self, msg: Any) -> None:
        """A record ``Consumer.poll``/``consume`` returned (check ``msg.error()`` first)."""
        at = Position(msg.topic(), msg.partition(), msg.offset())
        self.write(Polled(self.process, self.now(), at, text(msg.value()), text(msg.key())))

    def delivered(self, err: Any, msg: Any, *, source: Position | None, txn: int | None, **producer: Any) -> None:
        """A delivery report (call it from ``on_delivery``); ``producer`` may give ``transactional_id``,
        ``producer_id`` and ``producer_epoch``."""
        offset = None if err is not None or msg.offset() is None or msg.offset() < 0 else msg.offset()
        error = None if err is None else (err.name() if hasattr(err, "name") else str(err))
        self.write(
            Sent(self.process, self.now(), msg.topic(), msg.partition(), offset, text(msg.value()), text(msg.key()),
                 source=source, txn=txn, error=error, **producer)
        )  # fmt: skip

    def committed(
        self, txn: int | None, offsets: Iterable[Any] = (), transactional_id: str | None = None, via: str = ""
    ) -> None:
        """``commit_transaction`` (or a plain offset commit, ``txn=None``, made ``via`` ``"commit()"`` or
        ``"auto commit"``) returned; ``offsets`` are the TopicPartitions committed with it (their offset: the
        next to consume)."""
        pos = tuple(Position(tp.topic, tp.partition, tp.offset) for tp in offsets)
        self.write(Committed(self.process, self.now(), txn, pos, transactional_id, via))

    def failed(self, call: str, err: Any, transactional_id: str | None = None) -> None:
        """A client ``call`` raised ``err`` (a ``KafkaError``), or a poll returned it."""
        self.write(
            Failed(self.process, self.now(), call, err.name(), err.str(), bool(err.fatal()),
                   bool(err.txn_requires_abort()), transactional_id)
        )  # fmt: skip

    def aborted(self, txn: int, reason: str = "", transactional_id: str | None = None) -> None:
        """``abort_transaction`` returned."""
        self.write(Aborted(self.process, self.now(), txn, reason, transactional_id))

    def assigned(self, partitions: Iterable[Any], committed: Iterable[Any] = ()) -> None:
        """``on_assign`` (or ``assign``) gave these TopicPartitions; ``committed`` are their committed
        offsets if the processor fetched them (``Consumer.committed``); negative ones mean "none yet"."""
        tps = tuple((tp.topic, tp.partition) for tp in partitions)
        pos = tuple(Position(tp.topic, tp.partition, tp.offset) for tp in committed if tp.offset >= 0)
        self.write(Assigned(self.process, self.now(), tps, pos))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> HistoryWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
