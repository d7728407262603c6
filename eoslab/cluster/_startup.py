"""Where a cold start's time goes: the kit's own marks, and what each node's log says it did when.

``Cluster.up(on_phase=...)`` calls the hook with a phase name as each step of the start ends
(:data:`PHASES`); :class:`StartMarks` records them. Each node's log says when its JVM was spawned
(the kit's marker line), when log4j wrote its first line, when Kafka said "Kafka Server started",
and the role's own milestones (the active controller's election, a broker's registration and
unfencing, the internal topics' creation): :func:`node_start` reads them from the text after the
last marker. Both are wall-clock times (``time.time()``), so they line up.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

PhaseHook = Callable[[str], None]
"""Called with a phase name (:data:`PHASES`) when that step of a start has finished."""

PHASES: dict[str, str] = {
    "prepared": "configs, ports, argfiles (and the CDS archive, once)",
    "formatted": "kafka-storage format of new nodes",
    "spawned": "six JVMs spawned",
    "quorum": "DescribeQuorum: 3 voters and a leader",
    "brokers": "DescribeCluster: 3 registered, unfenced brokers",
    "coordinators": "FindCoordinator: __consumer_offsets and __transaction_state",
    "full_isr": "every partition's ISR complete",
    "election": "preferred-leader election",
    "seed": "seed topic checked on every broker",
}
"""The kit's marks, in the order a start passes them (``Cluster.up`` and ``LocalBackend.up``)."""

MARKER = "===== eoslab: starting {name} at {when} ====="
"""The line the local backend writes into a node's log before it spawns the JVM."""
MARKER_RE = re.compile(r"^===== eoslab: starting (\S+) at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) =====$", re.M)
MARKER_TIME = "%Y-%m-%d %H:%M:%S.%f"
LINE_RE = re.compile(r"^\[(\d\d):(\d\d):(\d\d),(\d{3})\] ")

MILESTONES: dict[str, re.Pattern[str]] = {
    "first_log": re.compile(""),  # the first log4j line: the JVM is up and Kafka's main() runs
    "started": re.compile("Kafka Server started"),
    "leader_known": re.compile(r"In the new epoch \d+, the leader is \d+\."),  # a controller learns the raft leader
    "active": re.compile("Becoming the active controller"),
    "registered": re.compile("Successfully registered broker"),
    "unfenced": re.compile("The broker has been unfenced"),
    "offsets_created": re.compile("Replayed TopicRecord for topic __consumer_offsets "),
    "txn_created": re.compile("Replayed TopicRecord for topic __transaction_state "),
    "txn_loaded": re.compile("transaction metadata from __transaction_state"),
}
"""What each milestone's first log line matches (``first_log``: any line)."""


def marker_line(name: str, when: float | None = None) -> str:
    stamp = datetime.fromtimestamp(time.time() if when is None else when).strftime(MARKER_TIME)[:-3]
    return MARKER.format(name=name, when=stamp)


@dataclass
class StartMarks:
    """The kit's marks of one start: ``t0`` and, per phase, when it ended (``time.time()``)."""

    t0: float = field(default_factory=time.time)
    marks: dict[str, float] = field(default_factory=dict)

    def __call__(self, phase: str) -> None:
        self.marks.setdefault(phase, time.time())  # the first time a step ended is when it ended

    def since_t0(self, phase: str) -> float | None:
        at = self.marks.get(phase)
        return None if at is None else at - self.t0


@dataclass
class NodeStart:
    """One node's start, from its log: wall-clock times (None when the log does not say)."""

    name: str
    spawned: float | None = None
    events: dict[str, float] = field(default_factory=dict)

    def at(self, milestone: str) -> float | None:
        return self.events.get(milestone)


def _line_time(day: datetime, line: str, after: datetime) -> datetime | None:
    m = LINE_RE.match(line)
    if m is None:
        return None
    h, mi, s, ms = (int(g) for g in m.groups())
    at = day.replace(hour=h, minute=mi, second=s, microsecond=ms * 1000)
    if at < after - timedelta(hours=12):  # the log crossed midnight since the marker
        at += timedelta(days=1)
    return at


def node_start(name: str, text: str) -> NodeStart:
    """The milestones of the LAST start recorded in a node's log ``text`` (its lines after the last marker)."""
    out = NodeStart(name)
    found = list(MARKER_RE.finditer(text))
    if not found:
        return out
    last = found[-1]
    stamp = last.group(2)
    spawned = datetime.strptime(stamp if "." in stamp else stamp + ".0", MARKER_TIME)
    out.spawned = spawned.timestamp()
    day = spawned.replace(hour=0, minute=0, second=0, microsecond=0)
    for line in text[last.end() :].splitlines():
        at = _line_time(day, line, spawned)
        if at is None:
            continue
        for milestone, pattern in MILESTONES.items():
            if milestone not in out.events and pattern.search(line):
                out.events[milestone] = at.timestamp()
    return out
