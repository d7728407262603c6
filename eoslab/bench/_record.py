"""One folder per run under ``runs/``, as Parquet: what was asked, what was seen, where.

    runs/<run_id>/params.parquet    one row per workload (every batching setting, explicit)
    runs/<run_id>/summary.parquet   one row per workload × client (eoslab, java): throughput and latency
    runs/<run_id>/samples.parquet   one row per record of the fixed-load phase × kind
                                    (ack, e2e_read_committed, e2e_read_uncommitted)
    runs/<run_id>/env.parquet       the machine, the versions, the backend, the load when it started

The analysis (PySpark) and the lab checks (pandas) both read these files, never the
process that wrote them, so a class's runs can be collected and analysed elsewhere.
"""

from __future__ import annotations

import getpass
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import pandas as pd

RUNS_ENV = "EOSLAB_RUNS"
TABLES = ("params", "summary", "samples", "env")


def runs_dir(path: str | Path | None = None) -> Path:
    """``path``, else ``$EOSLAB_RUNS``, else ``runs/`` of the checkout (gitignored), else ``./runs``."""
    if path is not None:
        return Path(path)
    if env := os.environ.get(RUNS_ENV):
        return Path(env)
    from eoslab._paths import project_root

    root = project_root()
    return (root / "runs") if root is not None else Path("runs")


def run_folders(root: str | Path) -> list[Path]:
    """Every complete run folder under ``root``, at any depth (an instructor's class folder nests them)."""
    return sorted(p.parent for p in Path(root).rglob("summary.parquet") if (p.parent / "env.parquet").is_file())


def new_run_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid() % 10000:04d}"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _java_version() -> str:
    try:
        from eoslab import _java

        out = subprocess.run([_java.java_executable(), "-version"], capture_output=True, text=True, timeout=20)
        return (out.stderr or out.stdout).splitlines()[0].strip()
    except Exception:  # noqa: BLE001 - the fingerprint says "unknown" rather than failing a run
        return "unknown"


def fingerprint(run_id: str, backend: str, matrix: str) -> dict[str, Any]:
    import confluent_kafka
    import psutil

    from eoslab.topology import KAFKA_VERSION

    load1, _, _ = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "run_id": run_id,
        "learner": os.environ.get("EOSLAB_LEARNER") or getpass.getuser(),
        "started_at": pd.Timestamp.now(tz="UTC"),
        "matrix": matrix,
        "cpu": _cpu_model(),
        "cores": os.cpu_count() or 0,
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "kafka_version": KAFKA_VERSION,
        "client": "confluent-kafka",
        "client_version": confluent_kafka.version()[0],
        "librdkafka_version": confluent_kafka.libversion()[0],
        "java": _java_version(),
        "backend": backend,
        "load1_at_start": round(load1, 2),  # a loaded machine makes noisy figures: keep the evidence
    }


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    """Optional numbers as float64 (NaN = none): a run without transactions would otherwise write a
    null-typed ``commit_ms`` column, and Spark cannot merge that schema with another run's double."""
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
    reader never sees half a run."""
    tmp = folder.with_name(folder.name + ".partial")
    tmp.mkdir(parents=True, exist_ok=True)
    # Timestamps in microseconds: Spark cannot read Parquet TIMESTAMP(NANOS), pandas 2's default.
    opts = {"index": False, "coerce_timestamps": "us", "allow_truncated_timestamps": True}
    _typed(pd.DataFrame(params)).to_parquet(tmp / "params.parquet", **opts)
    _typed(pd.DataFrame(summary)).to_parquet(tmp / "summary.parquet", **opts)
    samples.to_parquet(tmp / "samples.parquet", **opts)
    pd.DataFrame([env]).to_parquet(tmp / "env.parquet", **opts)
    tmp.rename(folder)
    return folder
