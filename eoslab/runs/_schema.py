"""The four tables of a run and the columns every reader may rely on.

A writer may add columns (a newer kit records more); it may not leave one of these
out. :func:`eoslab.runs.write_run` refuses a run that does, so a reader (PySpark in
``eoslab.analysis``, pandas in ``eoslab.grading`` and ``eoslab.classroom``) never meets a half-schema.

Format 2 (this kit) measures throughput in rounds: a saturation row per mode and round.
Format 1 runs (one saturation per mode, its timer started before the producer had
connected, 0.5-4 s long) are refused by the readers with one sentence: their figures
cannot be put beside rounds.
"""

from __future__ import annotations

from pathlib import Path

from eoslab.errors import DataError
from eoslab.runs._cpu import CPU_COLUMNS

FORMAT = 2
"""The runs format this kit writes and reads (``env.format``; runs without it are format 1)."""
NOT_IN_ROUNDS = -1
"""``summary.round`` of a row measured outside the rounds: the Java peer and the fixed-load phase."""

TABLES = ("params", "summary", "samples", "env")

COLUMNS: dict[str, tuple[str, ...]] = {
    # one row per workload: every batching setting, explicit (Workload.record()), and how long it was measured
    "params": (
        "run_id",
        "workload",
        "mode",
        "label",
        "commit_ms",
        "record_size",
        "rate",
        "duration_s",
        "linger_ms",
        "batch_size",
        "max_in_flight",
        "buffer_kb",
        "partitions",
        "acks",
        "idempotent",
        "transactional",
        "rounds",
        "slice_s",
    ),
    # saturation: one row per workload x round (client eoslab) and per workload (client java, round -1);
    # fixed_load: one row per workload (round -1)
    "summary": (
        "run_id",
        "workload",
        "label",
        "mode",
        "commit_ms",
        "client",
        "phase",
        "round",
        "position",
        "records",
        "seconds",
        "records_per_s",
        "mb_per_s",
        "commits",
        "errors",
        # the CPU seconds of the client, the 3 brokers, the 3 controllers over the row's window (NaN: not measured)
        *CPU_COLUMNS,
    ),
    # one row per record of the fixed-load phase x kind (ack, e2e_read_committed, e2e_read_uncommitted)
    "samples": ("run_id", "workload", "label", "kind", "seq", "latency_ms"),
    # the machine, the versions, the backend, the load when it started, and the run's shape
    "env": (
        "run_id",
        "format",
        "learner",
        "started_at",
        "matrix",
        "rounds",
        "seconds",
        "cpu",
        "cores",
        "memory_gib",
        "os",
        "python",
        "kafka_version",
        "client",
        "client_version",
        "librdkafka_version",
        "java",
        "backend",
        "load1_at_start",
    ),
}


class RunsFormatError(DataError):
    """A run that does not follow the runs format (a table or a column missing, or an older format)."""


class NoRunsError(DataError, FileNotFoundError):
    """A runs folder without a single complete run (also a ``FileNotFoundError``, which the readers of
    ``eoslab.runs`` raised before)."""

    def __str__(self) -> str:  # OSError would prefix an errno
        return str(self.args[0]) if self.args else ""


def check_columns(table: str, columns: list[str]) -> None:
    missing = [c for c in COLUMNS[table] if c not in columns]
    if missing:
        raise RunsFormatError(
            f"The {table} table of this run lacks {', '.join(missing)}: the writer does not follow the "
            "runs format (eoslab.runs.COLUMNS); fix the writer, not the readers."
        )


def run_format(folder: Path) -> int:
    """The format a run folder was written in (1 when its env table has no ``format``)."""
    import pyarrow.parquet as pq

    table = pq.read_table(folder / "env.parquet")
    if "format" not in table.column_names:
        return 1
    return int(table.column("format")[0].as_py())


def require_format(folders: list[Path]) -> None:
    """Refuse runs of another format, in one sentence naming them."""
    old = [f for f in folders if run_format(f) != FORMAT]
    if old:
        more = f" and {len(old) - 1} more" if len(old) > 1 else ""
        raise RunsFormatError(
            f"{old[0]}{more} was recorded by an older kit (runs format {run_format(old[0])}, one short saturation "
            f"per mode, no rounds) and cannot be analysed beside format {FORMAT}: move it out of the runs "
            "folder and measure again with `eoslab bench producers`."
        )
