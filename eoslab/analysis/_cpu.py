"""CPU per record per process kind, as ``eoslab bench producers`` prints it: both clients side by side.

The table itself is :func:`eoslab.runs.cpu_table` (pure pandas, a ratio of sums over each mode's
measured windows); this module only lays it out, one line per mode, the harness's three kinds beside
the Java tool's.
"""

from __future__ import annotations

import math

import pandas as pd

from eoslab.runs import CPU_KINDS

NOT_MEASURED = "not measured on docker (the nodes' pids are not this machine's)"
CLIENTS = ("eoslab", "java", "rdkafka_perf")
WIDTHS = {"client": 9, "brokers": 10, "controllers": 14}
GAP = "   "


def _cell(x: float, kind: str) -> str:
    return f"{'—' if math.isnan(x) else f'{x:.1f}':>{WIDTHS[kind]}}"


def _mode_line(label: str, clients: list[str], us: pd.Series) -> str:
    cells = (_cell(float(us.get((label, c, k), math.nan)), k) for c in clients for k in CPU_KINDS)
    groups = ["".join(next(cells) for _ in CPU_KINDS) for _ in clients]
    return f"{label:<12}" + "".join(GAP + g for g in groups)


def cpu_lines(table: pd.DataFrame, backend: str = "local") -> list[str]:
    """The printed table of :func:`eoslab.runs.cpu_table`: a line per mode, µs per record for each client's
    process kinds over the same windows as its throughput; no lines for a run without the figures."""
    if table.empty:
        return []
    clients = [c for c in CLIENTS if c in set(table["client"])]
    us = table.set_index(["label", "client", "kind"])["us_per_record"]
    span = sum(WIDTHS.values())
    lines = [
        "CPU µs per record over each mode's measured windows only (the harness's slices; the Java tool's and "
        "rdkafka_performance's stretch after their warm-up): client = the producing process, brokers and "
        "controllers = the 3 of each, summed",
        f"{'':<12}" + "".join(f"{GAP}{' ' + c + ' ':-^{span}}" for c in clients),
        f"{'mode':<12}" + "".join(GAP + "".join(f"{k:>{WIDTHS[k]}}" for k in CPU_KINDS) for _ in clients),
    ]
    lines += [_mode_line(label, clients, us) for label in dict.fromkeys(table["label"])]
    if backend != "local":
        lines.append(f"brokers and controllers: {NOT_MEASURED}")
    return lines
