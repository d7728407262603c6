"""librdkafka's log lines, routed through Python ``logging``: every logger and its level, set here once.

librdkafka logs to stderr unless a client gets a ``logger``; in a notebook that is
red text for every retry. Each kind of client gets its own child logger of
``eoslab.librdkafka``, so a level set for one never depends on which module was
imported first, and a learner can turn one up without the others.

The lessons' clients are the kit's (the inputs it writes, the reads it checks with, the audit topic): a
retry they meet ("Coordinator load in progress") is not news under a cell, and what the learner must act on
is raised as one sentence. Their lines are kept, not printed: the last :data:`KEPT_LINES` in
``KEPT.lines``; to see them as they come::

    import logging; logging.getLogger("eoslab.librdkafka").addHandler(logging.StreamHandler())
"""

from __future__ import annotations

import collections
import logging
import sys
from typing import TYPE_CHECKING, Any, TextIO

KEPT_LINES = 2000


class _Kept(logging.Handler):
    """The last :data:`KEPT_LINES` lines of the lessons' clients, ``LEVEL message`` each."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: collections.deque[str] = collections.deque(maxlen=KEPT_LINES)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


if TYPE_CHECKING:  # generic for type checkers; at run time only from Python 3.11 on
    _StreamHandler = logging.StreamHandler[TextIO]
else:
    _StreamHandler = logging.StreamHandler


class _Stderr(_StreamHandler):
    """Python's last-resort handler, kept for one logger: ``sys.stderr`` as it is when a line is written (a
    notebook's kernel replaces it after import)."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


LESSONS = logging.getLogger("eoslab.librdkafka")
"""Clients of lessons, labs and benchmarks: warnings and errors are kept in :data:`KEPT` (a retry, a fenced
producer), never printed under a cell: with a handler of its own and no propagation, Python's last-resort
handler (stderr) never sees them."""
LESSONS.setLevel(logging.WARNING)
KEPT = _Kept()
LESSONS.addHandler(KEPT)
LESSONS.propagate = False

KIT = logging.getLogger("eoslab.librdkafka.kit")
"""The kit's own clients (admin, readiness probes, the CDS warm-up): they meet brokers killed on
purpose, and librdkafka logs every refused connection at ERROR; that is noise, not news."""
KIT.setLevel(logging.CRITICAL)

EXPERIMENTS = logging.getLogger("eoslab.librdkafka.experiments")
"""Clients of an experiment whose refusal IS the result (KIP-447's commit with stale group metadata): the broker's
answer is read from the trace and shown in the experiment's table, so librdkafka's TXNERR for it is not news."""
EXPERIMENTS.setLevel(logging.CRITICAL)

BENCH = logging.getLogger("eoslab.librdkafka.bench")
"""Benchmark clients: errors show on stderr (``eoslab bench`` in a terminal); warnings such as "Coordinator load in
progress: retrying" are not figures."""
BENCH.setLevel(logging.ERROR)
BENCH.addHandler(_Stderr())
BENCH.propagate = False
