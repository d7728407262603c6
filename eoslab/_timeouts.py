"""How long the kit waits, and why that long: the timeouts that more than one part uses.

They are sized against the cluster's own clocks (:mod:`eoslab.topology`): a broker
that stops heartbeating is fenced after ``broker.session.timeout.ms`` = 5 s, a follower
that stops fetching leaves the ISR after ``replica.lag.time.max.ms`` = 10 s, and a cold
start of six JVMs on 2 cores takes 10-20 s. A timeout here is patience for a busy
laptop, never a pace: every wait returns as soon as its condition holds.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

REQUEST = 5.0
"""One admin or raw request on loopback: milliseconds when the node is up; 5 s means it is not."""

PROBE = 2.0
"""One request inside a wait loop: shorter than REQUEST, so the loop sees a recovery soon (the loop's
own timeout is the patience)."""

READY = 90.0
"""Cold start to ready: 10-20 s on 2 cores; 90 s leaves room for a first, JIT-cold start on a busy laptop."""

CONNECT_READY = 30.0
"""``connect()`` to a cluster that already runs: only a recovering node can make it wait."""

HEAL = 120.0
"""A heal may start nodes (up to READY) and then wait for every ISR: longer than READY."""

FULL_ISR = 90.0
"""Every partition in sync, the 100 of the internal topics included, after nodes came back: a restarted
broker catches up within seconds; 90 s as READY, since a heal after a cold start waits for both."""

ISR = 60.0
"""One partition's ISR reaching a given set: a broker drops out after ``replica.lag.time.max.ms`` (10 s)
and rejoins once caught up; 60 s covers both on a busy laptop."""

NEW_LEADER = 30.0
"""A killed leader is noticed when its session expires (``broker.session.timeout.ms`` = 5 s), then the
controller elects; 30 s = six sessions."""

BROKER_REGISTER = 60.0
"""A started broker registers and is unfenced in 5-10 s; a JVM-cold one on a busy laptop can take far more."""

NODE_STOP = 20.0
"""SIGTERM, then SIGKILL after this: a broker's controlled shutdown first moves its leaderships away
(seconds); past 20 s it is stuck."""

TOPIC = 15.0
"""CreateTopics / DeleteTopics answered by the controller, then every broker learning it from the metadata log."""

SEED = 30.0
"""The demo topic's arrangement visible on every broker after an election: metadata propagation, seconds."""

TOOL = 120.0
"""One Kafka CLI tool: a 1-3 s JVM start, then its work (a DumpLogSegments over many segments, a format)."""

CLIENT_CALL = 30.0
"""One blocking librdkafka call (flush, init_transactions, commit/abort_transaction): well under a second on a
healthy cluster; 30 s covers a transaction coordinator that is loading its partition after a restart."""

CLIENT_DRAIN = 60.0
"""flush() after a saturation phase, with up to a hundred thousand records queued: twice CLIENT_CALL."""

CELL_GUARD_FACTOR = 4.0
"""A notebook cell's guard against a hang: this many times its time measured on a quiet 2-core machine
(docs/course-times.json), never less than the runner's own per-cell limit. Twice for a laptop at half the speed
(a core taken by something else: docs/reliability.md), twice again for the spread between runs."""


@functools.cache
def _course_times() -> dict[str, dict[str, float]]:
    """Each measured notebook's cells (id -> seconds), by ``notebooks/NN.ipynb`` / ``solutions/labNN.ipynb``."""
    from eoslab._paths import project_root

    root = project_root()
    try:
        raw = json.loads((root / "docs" / "course-times.json").read_text()) if root else {}
    except (OSError, ValueError):
        raw = {}
    return {name: dict(entry.get("cells", {})) for name, entry in raw.items() if isinstance(entry, dict)}


def cell_guard(notebook: str, cell_id: str | None, floor: float) -> float:
    """Seconds a cell of ``notebook`` (any path: a lab or a learner's copy is measured as its solution) may run:
    ``floor``, or CELL_GUARD_FACTOR times the cell's measured time when that is longer."""
    name = notebook.replace("\\", "/").rsplit("/", 1)[-1]
    key = f"solutions/{name}" if name.startswith("lab") else f"notebooks/{name}"
    measured = _course_times().get(key, {}).get(cell_id or "", 0.0)
    return max(floor, math.ceil(CELL_GUARD_FACTOR * measured))


@contextmanager
def nbval_cell_guard(item: Any) -> Iterator[float | None]:
    """Within the block, nbval's per-cell limit for the pytest ``item`` is its :func:`cell_guard` (the limit given
    with ``--nbval-cell-timeout`` is the floor), and the block gets that guard; None, and nothing changed, for an
    item that is not a notebook cell or a run without the option. The option is restored at the block's end."""
    cell = getattr(item, "cell", None)
    option = item.config.option
    given = getattr(option, "nbval_cell_timeout", None)
    if cell is None or given is None:
        yield None
        return
    option.nbval_cell_timeout = cell_guard(str(item.path), cell.get("id"), float(given))
    try:
        yield option.nbval_cell_timeout
    finally:
        option.nbval_cell_timeout = given
