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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from eoslab.history._events import Event, HistoryFormatError, from_json, to_json


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
            events.append(from_json(raw.decode("utf-8")))
        except (ValueError, UnicodeDecodeError, KeyError) as e:
            raise HistoryFormatError(
                f"{path} line {number} is not a history event ({e}): only its last line may be torn, "
                "so this file was edited or written by something else than eoslab.history.HistoryWriter."
            ) from None
    torn = last.decode("utf-8", "replace") if last.strip() else None
    if torn is not None:
        try:  # a complete event without its newline (killed between the two) is still an event
            events.append(from_json(torn))
            torn = None
        except (ValueError, KeyError):
            pass
    return History(events, path=path, torn_tail=torn)


class HistoryWriter:
    """Appends events to a history file, one ``os.write`` per line.

    >>> with HistoryWriter("runs/h/eos-1.jsonl", process="eos-1") as h:
    ...     h.write(Polled(h.process, h.now(), Position("in", 0, 7), "v7"))
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
