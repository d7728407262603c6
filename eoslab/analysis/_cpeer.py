"""The harness against librdkafka's own ``rdkafka_performance`` (``eoslab bench producers --c-peer``).

Pure pandas over a run's few saturation rows: the harness's median over rounds per mode beside the C
tool's rate over its measured window (:mod:`eoslab.bench._cpeer`), their ratio, and the tool's own figures
that say whether librdkafka's broker threads spin in it too (CPU and wake-ups per record).
"""

from __future__ import annotations

import math

import pandas as pd

from eoslab.runs import CPEER_CLIENT as CLIENT
from eoslab.runs import CPEER_WARMUP_S

# `eoslab bench producers`: a throughput figure of the kit's harness is worth something only
# if the harness is not the bottleneck.
HARNESS_VS_JAVA_RATIO = 0.9
"""The harness over Kafka's producer-perf-test at the same settings, measured minutes apart in one run."""

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


Bounds = dict[str, tuple[float, float]]
"""Per mode, the harness's records/s interval over rounds (the report's bootstrap interval)."""


def peer_flag(label: str, ratio: float, peer: float, bounds: Bounds) -> str:
    """What the harness's ratio to a peer says, judged with the harness's interval over rounds: the peer ran
    one window, the harness's figure is a median of rounds, so a ratio below the target whose interval
    reaches it is this run's noise, not a slow harness."""
    if math.isnan(ratio) or ratio >= HARNESS_VS_JAVA_RATIO:
        return ""
    lo, hi = bounds.get(label, (math.nan, math.nan))
    if math.isnan(hi) or peer <= 0:
        return f"  below {HARNESS_VS_JAVA_RATIO:g}"
    span = f"[{lo / peer:.2f}, {hi / peer:.2f}] over the harness's rounds"
    if hi / peer < HARNESS_VS_JAVA_RATIO:
        return f"  {span}: below {HARNESS_VS_JAVA_RATIO:g} in every round's reach, the harness is the bottleneck"
    return f"  {span}: below {HARNESS_VS_JAVA_RATIO:g} at the median but within this run's noise"


NOT_MEASURED = (
    "librdkafka's own rdkafka_performance (the same library without Python): not measured in this run; "
    "`eoslab bench producers --c-peer` adds it (about 20 s more; built once from librdkafka's source, which needs "
    "npm, gcc and make)"
)
"""Said where a run compared the harness with the Java peer but not with the C one (the C peer is opt-in: its
build needs tools a learner's laptop may not have, and it would take the default run past its 180 s)."""


def cpeer_lines(
    table: pd.DataFrame, wheel: str, bounds: Bounds | None = None, java_measured: bool = False
) -> list[str]:
    """The printed comparison. A run without the C peer: one line saying how to add it when the Java peer was
    measured (``java_measured``), else none. ``bounds``: :data:`Bounds`."""
    if table.empty:
        return [NOT_MEASURED] if java_measured else []
    version = table["version"].iloc[0]
    lines = [
        f"librdkafka's own rdkafka_performance (librdkafka {version}, built from source; the harness runs the "
        f"wheel's {wheel}), same settings and bytes, its rate after its first {CPEER_WARMUP_S:g} s (its warm-up):"
    ]
    for _, r in table.iterrows():
        flag = peer_flag(r["label"], float(r["ratio"]), float(r["c"]), bounds or {})
        lines.append(
            f"  {r['label']:<12} eoslab {r['eoslab']:>8.0f}  C {r['c']:>8.0f}  ratio {r['ratio']:.2f}{flag}"
            f"   (C: broker threads {_num(r['broker_threads_us'], '.1f')} µs/record, "
            f"{_num(r['wakeups_per_record'], '.2f')} wake-ups/record)"
        )
    return lines
