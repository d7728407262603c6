"""One row of a run's ``summary`` table, built in one place for every writer.

The harness's rounds, Kafka's Java tool, the fixed-load phase (``eoslab.bench``) and the generated
runs (``eoslab.analysis``) all write the same columns (:data:`eoslab.runs.COLUMNS` ``["summary"]``);
a writer adds its own extra columns to the dict this returns.
"""

from __future__ import annotations

from typing import Any

from eoslab.runs._cpu import cpu_columns
from eoslab.runs._workloads import Workload


def summary_row(
    run_id: str,
    i: int,
    w: Workload,
    *,
    client: str,
    phase: str,
    round_: int,
    position: int,
    records: int,
    seconds: float,
    commits: int = 0,
    errors: int = 0,
    records_per_s: float | None = None,
    cpu: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The summary row of workload ``w`` (index ``i``): ``records`` in ``seconds``.

    ``records_per_s`` overrides ``records / seconds`` (a generated run knows its rate exactly);
    a zero-length measurement has a NaN rate, never a division error. ``cpu``: the CPU seconds each
    process kind spent over the same window (:data:`eoslab.runs.CPU_KINDS`; a kind left out is NaN).
    """
    rate = records_per_s if records_per_s is not None else (records / seconds if seconds else float("nan"))
    return {
        "run_id": run_id,
        "workload": i,
        "label": w.label,
        "mode": w.mode,
        "commit_ms": w.commit_ms,
        "client": client,
        "phase": phase,
        "round": round_,
        "position": position,
        "records": records,
        "seconds": seconds,
        "records_per_s": rate,
        "mb_per_s": rate * w.record_size / 2**20,
        "commits": commits,
        "errors": errors,
        **cpu_columns(cpu),
    }
