"""The harness against librdkafka's own ``rdkafka_performance`` (``eoslab bench producers --c-peer``).

Pure pandas over a run's few saturation rows: the harness's median over rounds per mode beside the C
tool's rate over its measured window (:mod:`eoslab.bench._cpeer`), their ratio, and the tool's own figures
that say whether librdkafka's broker threads spin in it too (CPU and wake-ups per record).
"""

from __future__ import annotations

import math

import pandas as pd

from eoslab.bench.producers import CPEER_CLIENT as CLIENT
from eoslab.bench.producers import CPEER_WARMUP_S
from eoslab.bench.targets import HARNESS_VS_JAVA_RATIO

CPEER_TABLE = ("label", "eoslab", "c", "ratio", "version", "broker_threads_us", "wakeups_per_record")


def cpeer_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per mode the C tool measured: the harness's median records/s over rounds, the tool's, their ratio."""
    if "client" not in summary.columns or not (summary["client"] == CLIENT).any():
        return pd.DataFrame(columns=list(CPEER_TABLE))
    sat = summary[summary["phase"] == "saturation"]
    ours = sat[(sat["client"] == "eoslab") & (sat["round"] >= 0)].groupby("label")["records_per_s"].median()
    rows = []
    for _, c in sat[sat["client"] == CLIENT].iterrows():
        mine = float(ours.get(c["label"], math.nan))
        rate = float(c["records_per_s"])
        rows.append(
            (
                c["label"],
                mine,
                rate,
                mine / rate if rate > 0 else math.nan,
                str(c.get("cpeer_librdkafka_version", "?")),
                float(c.get("cpeer_broker_threads_us_per_record", math.nan)),
                float(c.get("cpeer_wakeups_per_record", math.nan)),
            )
        )
    return pd.DataFrame(rows, columns=list(CPEER_TABLE))


def _num(x: float, fmt: str) -> str:
    return "—" if math.isnan(x) else format(x, fmt)


def cpeer_lines(table: pd.DataFrame, wheel: str) -> list[str]:
    """The printed comparison; no lines for a run without the C peer."""
    if table.empty:
        return []
    version = table["version"].iloc[0]
    lines = [
        f"librdkafka's own rdkafka_performance (librdkafka {version}, built from source; the harness runs the "
        f"wheel's {wheel}), same settings and bytes, its rate after its first {CPEER_WARMUP_S:g} s (its warm-up):"
    ]
    for _, r in table.iterrows():
        flag = (
            ""
            if r["ratio"] >= HARNESS_VS_JAVA_RATIO
            else f"  below {HARNESS_VS_JAVA_RATIO:g}: the harness is the bottleneck"
        )
        lines.append(
            f"  {r['label']:<12} eoslab {r['eoslab']:>8.0f}  C {r['c']:>8.0f}  ratio {r['ratio']:.2f}{flag}"
            f"   (C: broker threads {_num(r['broker_threads_us'], '.1f')} µs/record, "
            f"{_num(r['wakeups_per_record'], '.2f')} wake-ups/record)"
        )
    return lines
