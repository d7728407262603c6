"""The fault matrix's runs (``eoslab bench faults``): one row per cell, beside module 06's runs.

    runs/faults-<run_id>/faults.parquet   one row per fault x processor: its anomaly counts, its notes
    runs/faults-<run_id>/env.parquet      the machine, the versions, the load (as module 06's runs)
    runs/faults-<run_id>/histories/       the processors' histories the checker judged (JSON lines)

A faults run has no ``summary.parquet``, so module 06's readers (:func:`run_folders`) pass it by;
:func:`fault_run_folders` finds these, at any depth (a class folder nests them, as it nests the others).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab.runs._folders import files_named, runs_dir
from eoslab.runs._schema import NoRunsError, RunsFormatError, check_columns
from eoslab.runs._tables import concat_table

if TYPE_CHECKING:
    import pandas as pd

FAULTS_TABLE = "faults"
FAULT_COLUMNS: tuple[str, ...] = (
    "run_id",
    "fault",
    "kind",
    "group_protocol",
    "records",
    "seconds",
    "valid",
    "lost_write",
    "duplicate",
    "aborted_read",
    "notes",
)
"""The columns every reader of the faults table may rely on; the writer adds one count per anomaly the
checker looked for (``torn_transaction``, ``missing_output``, ...) and the cell's topics."""


def fault_run_folders(root: str | Path | None = None) -> list[Path]:
    """Every complete faults run under ``root`` (default :func:`runs_dir`), at any depth."""
    base = runs_dir(root)
    if not base.exists():
        return []
    return sorted(
        p.parent for p in files_named(base, f"{FAULTS_TABLE}.parquet") if (p.parent / "env.parquet").is_file()
    )


def write_faults_run(folder: Path, rows: list[dict[str, Any]], env: dict[str, Any]) -> Path:
    """Write the faults table and the env row into ``folder`` (which may already hold the histories).

    The env table first, the faults table last under a temporary name, then renamed: a reader that
    finds ``faults.parquet`` finds a whole run."""
    import pandas as pd

    missing = [c for c in FAULT_COLUMNS if not rows or c not in rows[0]]
    if missing:
        raise RunsFormatError(
            f"The faults table of this run lacks {', '.join(missing)}: the writer does not follow "
            "eoslab.runs.FAULT_COLUMNS; fix the writer, not the readers."
        )
    check_columns("env", list(env))
    folder.mkdir(parents=True, exist_ok=True)
    opts: dict[str, Any] = {"index": False, "coerce_timestamps": "us", "allow_truncated_timestamps": True}
    pd.DataFrame([env]).to_parquet(folder / "env.parquet", **opts)
    tmp = folder / f"{FAULTS_TABLE}.parquet.partial"
    pd.DataFrame(rows).to_parquet(tmp, **opts)
    tmp.rename(folder / f"{FAULTS_TABLE}.parquet")
    return folder


def read_faults(root: str | Path | None = None) -> pd.DataFrame:
    """Every faults run's rows under ``root`` with pandas, each tagged with its ``run`` folder."""
    base = runs_dir(root)
    folders = fault_run_folders(base)
    if not folders:
        raise NoRunsError(f"No faults runs under {base}: run `eoslab bench faults` first.")
    return concat_table(base, folders, FAULTS_TABLE)
