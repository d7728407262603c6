"""The four tables of a run and the columns every reader may rely on.

A writer may add columns (a newer kit records more); it may not leave one of these
out. :func:`eoslab.runs.write_run` refuses a run that does, so a reader (PySpark in
``eoslab.analysis``, pandas in ``eoslab.grading``) never meets a half-schema.
"""

from __future__ import annotations

from eoslab.errors import EoslabError

TABLES = ("params", "summary", "samples", "env")

COLUMNS: dict[str, tuple[str, ...]] = {
    # one row per workload: every batching setting, explicit (Workload.record() and its place in the run)
    "params": (
        "run_id",
        "workload",
        "repeat",
        "mode",
        "label",
        "commit_ms",
        "record_size",
        "count",
        "rate",
        "duration_s",
        "linger_ms",
        "batch_size",
        "max_in_flight",
        "partitions",
        "acks",
        "idempotent",
        "transactional",
    ),
    # one row per workload x client (eoslab, java) x phase (saturation, fixed_load)
    "summary": (
        "run_id",
        "workload",
        "label",
        "mode",
        "commit_ms",
        "client",
        "phase",
        "records",
        "seconds",
        "records_per_s",
        "mb_per_s",
        "errors",
    ),
    # one row per record of the fixed-load phase x kind (ack, e2e_read_committed, e2e_read_uncommitted)
    "samples": ("run_id", "workload", "label", "kind", "seq", "latency_ms"),
    # the machine, the versions, the backend, the load when it started
    "env": (
        "run_id",
        "learner",
        "started_at",
        "matrix",
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


class RunsFormatError(EoslabError):
    """A run that does not follow the runs format (a table or a column missing)."""


def check_columns(table: str, columns: list[str]) -> None:
    missing = [c for c in COLUMNS[table] if c not in columns]
    if missing:
        raise RunsFormatError(
            f"The {table} table of this run lacks {', '.join(missing)}: the writer does not follow the "
            "runs format (eoslab.runs.COLUMNS); fix the writer, not the readers."
        )
