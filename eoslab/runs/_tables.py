"""The tables of a run: written atomically, read back (one table of many runs) with pandas."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab.runs._folders import run_folders, runs_dir
from eoslab.runs._schema import NoRunsError, check_columns, require_format

if TYPE_CHECKING:  # pandas is imported when a table is read or written: `import eoslab.runs` stays light
    import pandas as pd


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """Optional numbers as float64 (NaN = none): a run without transactions would otherwise write a
    null-typed ``commit_ms`` column, and Spark cannot merge that schema with another run's double."""
    import pandas as pd

    for col in ("commit_ms", "commit_every"):
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    return df


def write_run(
    folder: Path,
    params: list[dict[str, Any]],
    summary: list[dict[str, Any]],
    samples: pd.DataFrame,
    env: dict[str, Any],
) -> Path:
    """Write the four tables; the folder is written under a temporary name and renamed, so a
    reader never sees half a run. A table without a column of :data:`COLUMNS` is refused."""
    import pandas as pd

    frames = {
        "params": _typed(pd.DataFrame(params)),
        "summary": _typed(pd.DataFrame(summary)),
        "samples": samples,
        "env": pd.DataFrame([env]),
    }
    for name, df in frames.items():
        check_columns(name, list(df.columns))
    tmp = folder.with_name(folder.name + ".partial")
    tmp.mkdir(parents=True, exist_ok=True)
    # Timestamps in microseconds: Spark cannot read Parquet TIMESTAMP(NANOS), pandas 2's default.
    opts = {"index": False, "coerce_timestamps": "us", "allow_truncated_timestamps": True}
    for name, df in frames.items():
        df.to_parquet(tmp / f"{name}.parquet", **opts)
    tmp.rename(folder)
    return folder


def read_table(name: str, root: str | Path | None = None) -> pd.DataFrame:
    """One table of every run under ``root`` (see :func:`runs_dir`) with pandas, each row tagged
    with its ``run`` (the folder, relative to the root)."""

    base = runs_dir(root)
    folders = run_folders(base)
    if not folders:
        raise NoRunsError(f"No runs under {base}: run the Setup cell first.")
    require_format(folders)
    return concat_table(base, folders, name)


def concat_table(base: Path, folders: list[Path], name: str) -> pd.DataFrame:
    """Table ``name`` of every run folder, one frame, each row with its run (the folder below ``base``)."""
    import pandas as pd

    frames = []
    for f in folders:
        df = pd.read_parquet(f / f"{name}.parquet")
        df["run"] = str(f.relative_to(base))
        frames.append(df)
    return pd.concat(frames, ignore_index=True)
