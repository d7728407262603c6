"""Where runs live: one folder per run, found at any depth under a root."""

from __future__ import annotations

import os
import time
from pathlib import Path

from eoslab._paths import project_root

RUNS_ENV = "EOSLAB_RUNS"


def runs_dir(path: str | Path | None = None) -> Path:
    """``path``, else ``$EOSLAB_RUNS``, else ``runs/`` of the checkout (gitignored), else ``./runs``."""
    if path is not None:
        return Path(path)
    if env := os.environ.get(RUNS_ENV):
        return Path(env)
    root = project_root()
    return (root / "runs") if root is not None else Path("runs")


def files_named(root: str | Path, name: str) -> list[Path]:
    """Every file called ``name`` under ``root``, at any depth. A folder that disappears during the walk is skipped,
    not an error (``os.walk``): `make test` keeps its clusters' data under its runs folder, where Kafka creates and
    deletes partition folders all the time, and ``Path.rglob`` raises on one that vanishes between its listing and
    its reading."""
    return [Path(folder) / name for folder, _subfolders, files in os.walk(root) if name in files]


def run_folders(root: str | Path) -> list[Path]:
    """Every complete run folder under ``root``, at any depth (an instructor's class folder nests them)."""
    return sorted(p.parent for p in files_named(root, "summary.parquet") if (p.parent / "env.parquet").is_file())


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid() % 10000:04d}"
