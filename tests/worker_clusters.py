"""Where pytest-xdist worker gwK's own cluster lives, and ``python -m tests.worker_clusters down|reset N``.

Worker gwK (K >= 1) runs its cluster on the session's ports +K*5000 with its data in ``<data folder>-gwK``
(conftest.py points it there before anything imports eoslab, and starts it before the worker's first cluster
item). `make test` exports ``EOSLAB_KEEP_CLUSTER`` so a worker's cluster outlives its tier, then runs ``down`` here
after the cluster tier (local clusters), ``reset`` after the course tier (docker ones), whatever the tier's
result, beside the session's own: every worker cluster the run may have started is stopped, as
`eoslab down` stops the session's (its fault proxy, then its nodes). ``reset`` also deletes their data, as
`eoslab reset` does: after the course tier, whose docker clusters keep theirs in named volumes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

WORKER_OFFSET_STEP = 5000
"""xdist worker gwK's cluster: ports +K*5000 from the session's (clear of the docker +500, bad-input +750,
recording +1000/+2000 and kernel-message 11000+ clusters)."""


def worker_offset(k: int, environ: Mapping[str, str]) -> str:
    """Worker gwK's ``EOSLAB_PORT_OFFSET``, given the session's ``environ`` (imports nothing of eoslab, whose
    TOPOLOGY reads the offset once, at import)."""
    return str(int(environ.get("EOSLAB_PORT_OFFSET") or 0) + k * WORKER_OFFSET_STEP)


def worker_data(k: int) -> str:
    """Worker gwK's ``EOSLAB_DATA``: the session's data folder + ``-gwK``."""
    from eoslab._paths import data_dir

    return f"{data_dir()}-gw{k}"


def _env(k: int) -> dict[str, str]:
    return {
        **os.environ,
        "EOSLAB_PORT_OFFSET": worker_offset(k, os.environ),
        "EOSLAB_DATA": worker_data(k),
        "EOSLAB_TEST_WORKER": str(k),
    }


def down(workers: int, command: str = "down") -> int:
    """Stop (``command`` ``reset``: and delete the data of) the clusters of workers gw1 .. gw(workers-1), whole
    or in part (`eoslab down` stops what runs)."""
    rc = 0
    for k in range(1, workers):
        env = _env(k)
        if not Path(env["EOSLAB_DATA"]).is_dir():
            continue  # gwK never started a cluster
        rc |= subprocess.run([sys.executable, "-m", "eoslab.cli", command], env=env).returncode
    return rc


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("down", "reset") or not sys.argv[2].isdigit():
        sys.exit("usage: python -m tests.worker_clusters down|reset WORKERS  (WORKERS: the tier's -n)")
    sys.exit(down(int(sys.argv[2]), sys.argv[1]))
