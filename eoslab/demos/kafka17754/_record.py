"""The last run of each KAFKA-17754 experiment, kept under the runs folder: a re-run of notebook 05 shows it
instead of spending another ~75 s, and in ``make test`` the notebook shows what the cluster tier's tests
(test_kafka17754.py) ran and asserted on the same cluster minutes before.

One pickle per experiment (``<runs>/kafka17754/<key>.pickle``, written whole or not at all). A record this
code cannot read (an older kit's) counts as none: the experiment runs again.
"""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import TypeVar

from eoslab.runs import runs_dir

FOLDER = "kafka17754"
T = TypeVar("T")


def _path(key: str, root: str | Path | None) -> Path:
    return runs_dir(root) / FOLDER / f"{key}.pickle"


def keep(exp: T, key: str, root: str | Path | None = None) -> T:
    """Record ``exp`` as the last run of ``key`` (atomically: a reader never sees half a record)."""
    path = _path(key, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(f".{os.getpid()}.part")
    part.write_bytes(pickle.dumps(exp))
    part.replace(path)
    return exp


def last(key: str, kind: type[T], root: str | Path | None = None) -> T | None:
    """The last recorded run of ``key`` (a ``kind``), saying so in one line, or None (never run, unreadable,
    or not a ``kind``)."""
    path = _path(key, root)
    try:
        exp = pickle.loads(path.read_bytes())
    except Exception:  # noqa: BLE001 - missing, half-copied or an older kit's record: run it again
        return None
    if not isinstance(exp, kind):
        return None
    when = time.strftime("%H:%M on %d %b", time.localtime(path.stat().st_mtime))
    print(f"(the run of {when}, kept in {path}; reuse=False runs it again)")
    return exp
