"""The last run of a long demo experiment, kept under the runs folder: a notebook's re-run shows it (saying
so) instead of waiting for it again — KAFKA-17754's three (~75 s, notebook 05), the held Produce and the late
writes (~40 s, notebook 04). In ``make test`` the course tier's tests (test_kafka17754.py,
test_read_committed.py) keep their runs on the same backend (docker there) for the notebooks to show; a learner's
first run is live.

One pickle per experiment and backend (``<runs>/experiments/<backend>-<key>.pickle``, written whole or not at
all): a notebook on the docker backend never shows a run of the local one as its own. The learner's own files, never
a class's (``eoslab submit`` packs run folders only). A record this code cannot read (an older kit's) counts
as none: the experiment runs again.
"""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import TypeVar

from eoslab.runs import runs_dir

FOLDER = "experiments"
T = TypeVar("T")


def _path(key: str, backend: str, root: str | Path | None) -> Path:
    return runs_dir(root) / FOLDER / f"{backend}-{key}.pickle"


def keep(exp: T, key: str, backend: str, root: str | Path | None = None) -> T:
    """Record ``exp`` as the last run of ``key`` on a cluster of ``backend`` (``cluster.backend.name``),
    atomically: a reader never sees half a record."""
    path = _path(key, backend, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(f".{os.getpid()}.part")
    part.write_bytes(pickle.dumps(exp))
    part.replace(path)
    return exp


def last(key: str, kind: type[T], backend: str, root: str | Path | None = None) -> T | None:
    """The last recorded run of ``key`` (a ``kind``) on a cluster of ``backend``, saying so in one line, or
    None (never run there, unreadable, or not a ``kind``)."""
    path = _path(key, backend, root)
    try:
        exp = pickle.loads(path.read_bytes())
    except Exception:  # noqa: BLE001 - missing, half-copied or an older kit's record: run it again
        return None
    if not isinstance(exp, kind):
        return None
    when = time.strftime("%H:%M on %d %b", time.localtime(path.stat().st_mtime))
    print(f"(the run of {when}, kept in {path}; reuse=False runs it again)")
    return exp
