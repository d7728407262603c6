"""The clusters of `make test`'s xdist workers, started together before the suite needs them.

`make test` runs ``up`` in the background while the unit tier runs (which uses one core and no cluster),
so the cluster and course tiers find every worker's cluster ready instead of each worker starting its own
cold and starting it again for the next tier; ``down`` stops, after the course tier, the ones ``up``
started (a cluster that was already running is left as it was). Worker gwK's cluster is the one the root
conftest.py points gwK at (:func:`worker_environ`): ports +K*5000, data in ``<data folder>-gwK``.

    python tools/suite_clusters.py up   --workers 2 --record FILE
    python tools/suite_clusters.py down --record FILE
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

WORKER_OFFSET_STEP = 5000
"""xdist worker gwK's cluster: ports +K*5000 from the session's (the root conftest.py uses this one)."""


def worker_environ(k: int, environ: Mapping[str, str], data: Path) -> dict[str, str]:
    """The environment of worker gwK's cluster: gw0 the session's own; gwK (K >= 1) ports +K*5000 and data
    in ``<data>-gwK`` (``data``: the session's data folder)."""
    env = dict(environ)
    if k == 0:
        return env
    env["EOSLAB_PORT_OFFSET"] = str(int(environ.get("EOSLAB_PORT_OFFSET") or 0) + k * WORKER_OFFSET_STEP)
    env["EOSLAB_DATA"] = f"{data}-gw{k}"
    env["EOSLAB_TEST_WORKER"] = str(k)
    return env


def _eoslab() -> list[str]:
    return [sys.executable, "-m", "eoslab.cli"]


def _data() -> Path:
    from eoslab._paths import data_dir

    return data_dir()


def up(workers: int, record: Path) -> int:
    """Start the clusters of workers 0..workers-1 that are not running, all at once; record which."""
    envs = [worker_environ(k, os.environ, _data()) for k in range(max(workers, 1))]
    status = [subprocess.run([*_eoslab(), "status"], env=e, capture_output=True).returncode for e in envs]
    todo = [e for e, rc in zip(envs, status, strict=True) if rc != 0]
    procs = [
        subprocess.Popen([*_eoslab(), "up"], env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for e in todo
    ]
    outs = [p.communicate()[0].decode(errors="replace") for p in procs]
    started = [e for e, p in zip(todo, procs, strict=True) if p.returncode == 0]
    record.write_text("".join(f"{e.get('EOSLAB_TEST_WORKER', '0')}\n" for e in started))
    failed = [o for p, o in zip(procs, outs, strict=True) if p.returncode != 0]
    for out in failed:
        print(out, file=sys.stderr)
    return 1 if failed else 0


def down(record: Path) -> int:
    """Stop the clusters ``up`` recorded as started (the fault proxy with each, as `eoslab down` does)."""
    if not record.is_file():
        return 0
    rc = 0
    for k in sorted({int(line) for line in record.read_text().split()}, reverse=True):
        env = worker_environ(k, os.environ, _data())
        rc |= subprocess.run([*_eoslab(), "down"], env=env, stdout=subprocess.DEVNULL).returncode
    record.unlink()
    return rc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=["up", "down"])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--record", type=Path, required=True, help="the file naming the clusters `up` started")
    args = p.parse_args(argv)
    return up(args.workers, args.record) if args.action == "up" else down(args.record)


if __name__ == "__main__":
    sys.exit(main())
