"""CPU per record per process kind, from a run's saturation rows.

On one 2-core machine the client and the six JVMs of the cluster share the cores, so a mode that
costs the client more CPU (librdkafka's idempotent producer, see docs/benchmarks-producers.md) takes
it from the brokers. A figure of the client alone cannot say that; one per kind, each over the SAME
window, can. ``eoslab.bench`` records, on every saturation row, the CPU seconds (user + system) each
kind spent over that row's measured window (:data:`CPU_COLUMNS`): the harness's slice, or the Java
tool's stretch after its warm-up report. NaN where a kind was not measured (the docker backend's
nodes, whose pids are not the host's).

A mode's figure is its CPU summed over its measured windows ÷ the records of those windows: a ratio
of sums, so a short slice weighs as little as it measured.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

CPU_KINDS = ("client", "brokers", "controllers")
"""The producing process (the harness's Python process, or the Java tool's JVM), the 3 brokers summed,
the 3 controllers summed."""
CPU_COLUMNS = tuple(f"cpu_{k}_s" for k in CPU_KINDS)
"""A summary row's CPU seconds per kind over its measured window (NaN: not measured)."""
CPU_TABLE = ("label", "client", "kind", "windows", "records", "cpu_s", "us_per_record")


def cpu_columns(spent: Mapping[str, float] | None = None) -> dict[str, float]:
    """A row's :data:`CPU_COLUMNS` from the CPU seconds each kind spent (a kind left out is NaN)."""
    spent = spent or {}
    return {f"cpu_{k}_s": float(spent.get(k, math.nan)) for k in CPU_KINDS}


def cpu_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per mode, client (``eoslab``, ``java``) and kind: the saturation windows measured, their records,
    their CPU seconds and µs per record (:data:`CPU_TABLE`). A kind with no measured window has no row;
    a run recorded before these columns existed gives an empty table."""
    import pandas as pd

    if not set(CPU_COLUMNS) <= set(summary.columns):
        return pd.DataFrame(columns=list(CPU_TABLE))
    sat = summary[(summary["phase"] == "saturation") & (summary["records"] > 0)]
    rows = []
    for (label, client), g in sat.groupby(["label", "client"], sort=False):
        for kind, col in zip(CPU_KINDS, CPU_COLUMNS, strict=True):
            measured = g[g[col].notna()]
            if measured.empty:
                continue
            records, cpu = int(measured["records"].sum()), float(measured[col].sum())
            rows.append((label, client, kind, len(measured), records, cpu, cpu / records * 1e6))
    return pd.DataFrame(rows, columns=list(CPU_TABLE))
