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


def run_folders(root: str | Path) -> list[Path]:
    """Every complete run folder under ``root``, at any depth (an instructor's class folder nests them)."""
    return sorted(p.parent for p in Path(root).rglob("summary.parquet") if (p.parent / "env.parquet").is_file())


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid() % 10000:04d}"
