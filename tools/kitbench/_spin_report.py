"""``python -m tools.kitbench spin``'s table and the one sentence per control that its figures support.

The sentences are decided from the medians, never written in advance: a producer "spins" when its broker
threads wake at least :data:`SPIN_FACTOR` times as often per record as acks=all's in the same layout, and
more than once per record; two throughputs are "about the same" when their ranges over rounds overlap (with
one round: within :data:`SAME` of each other).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

SPIN_FACTOR = 10.0
SAME = 0.15
COLUMNS = (
    ("records_per_s", "records/s", 10, ".0f"),
    ("range", "range over rounds", 18, "s"),
    ("client_us", "client", 8, ".1f"),
    ("broker_threads_us", "rdk:broker", 11, ".1f"),
    ("app_us", "python", 8, ".1f"),
    ("brokers_us", "brokers", 9, ".1f"),
    ("wakeups_per_record", "wakeups/rec", 12, ".2f"),
    ("waitresp_cnt", "in flight", 10, ".1f"),
    ("msgs_inflight", "msgs_inflight", 14, ".0f"),
    ("outbuf_cnt", "outbuf", 7, ".1f"),
    ("rtt_p50_ms", "rtt p50 ms", 11, ".1f"),
    ("batch_msgs", "msgs/batch", 11, ".0f"),
)
"""Printed columns: field, heading, width, format. CPU columns are µs per record acked."""


def table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The median over rounds of every figure, per (variant, mode), in the order first measured."""
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    order = list(dict.fromkeys(zip(df["variant"], df["mode"], strict=True)))
    med = df.drop(columns=["round"]).groupby(["variant", "mode"], sort=False).median(numeric_only=True)
    groups = df.groupby(["variant", "mode"], sort=False)
    med["rounds"] = groups["round"].count()
    med["records_per_s_lo"], med["records_per_s_hi"] = groups["records_per_s"].min(), groups["records_per_s"].max()
    return med.loc[order].reset_index()


def _cell(x: Any, width: int, fmt: str) -> str:
    return f"{'—' if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt):>{width}}"


def lines(t: pd.DataFrame) -> list[str]:
    head = f"{'variant':<10} {'mode':<11}" + "".join(f"{h:>{w}}" for _, h, w, _ in COLUMNS)
    out = [
        "median over rounds; CPU in µs per record acked: client = this process, rdk:broker = librdkafka's broker "
        "threads, python = the producing thread, brokers = the 3 Kafka brokers; in flight = Produce requests "
        "awaiting an answer (waitresp_cnt), msgs_inflight = messages the idempotence cap counts",
        head,
    ]
    for _, r in t.assign(range=[_range(r) for _, r in t.iterrows()]).iterrows():
        out.append(f"{r['variant']:<10} {r['mode']:<11}" + "".join(_cell(r.get(f), w, fmt) for f, _, w, fmt in COLUMNS))
    return out


def _range(r: pd.Series) -> str:
    return f"{r['records_per_s_lo']:.0f}–{r['records_per_s_hi']:.0f}" if r["rounds"] > 1 else ""


def _same(a: pd.Series, b: pd.Series) -> bool:
    """Two cells' throughputs cannot be told apart: their ranges over rounds overlap (one round: within SAME)."""
    if min(a["rounds"], b["rounds"]) > 1:
        return bool(a["records_per_s_lo"] <= b["records_per_s_hi"] and b["records_per_s_lo"] <= a["records_per_s_hi"])
    return abs(float(a["records_per_s"]) / float(b["records_per_s"]) - 1) <= SAME


def _get(t: pd.DataFrame, variant: str, mode: str) -> pd.Series | None:
    hit = t[(t["variant"] == variant) & (t["mode"] == mode)]
    return hit.iloc[0] if len(hit) else None


def spins(t: pd.DataFrame, variant: str) -> bool | None:
    """Whether the idempotent producer of ``variant`` spins (None: a cell is missing)."""
    base, idem = _get(t, variant, "acks_all"), _get(t, variant, "idempotent")
    if base is None or idem is None:
        return None
    w_idem, w_base = float(idem["wakeups_per_record"]), float(base["wakeups_per_record"])
    return w_idem > 1.0 and w_idem >= SPIN_FACTOR * max(w_base, 1e-9)


def _gap(t: pd.DataFrame, variant: str) -> float:
    base, idem = _get(t, variant, "acks_all"), _get(t, variant, "idempotent")
    if base is None or idem is None:
        return math.nan
    return float(idem["records_per_s"]) / float(base["records_per_s"])


def _pair(t: pd.DataFrame, variant: str) -> str:
    base, idem = _get(t, variant, "acks_all"), _get(t, variant, "idempotent")
    assert base is not None and idem is not None
    return (
        f"{idem['wakeups_per_record']:.2f} wake-ups and {idem['broker_threads_us']:.1f} µs of broker-thread CPU per "
        f"record (acks_all: {base['wakeups_per_record']:.2f} and {base['broker_threads_us']:.1f}); idempotent at "
        f"{_gap(t, variant):.0%} of acks_all's throughput"
    )


def _course(t: pd.DataFrame) -> str | None:
    s = spins(t, "course")
    if s is None:
        return None
    verdict = "its broker threads spin" if s else "no spin is seen"
    return f"course layout: {_pair(t, 'course')}: {verdict}."


def _control(t: pd.DataFrame, variant: str, label: str) -> str | None:
    s, before = spins(t, variant), spins(t, "course")
    if s is None:
        return None
    if before is None or not before:
        return f"{label}: {_pair(t, variant)}; {'it spins here' if s else 'no spin'} (none in the course layout)."
    verdict = "the spin remains" if s else "the spin is gone"
    return f"{label}: {_pair(t, variant)}: {verdict} (course layout: {_gap(t, 'course'):.0%})."


def _window(t: pd.DataFrame) -> str | None:
    one, idem, base = _get(t, "mif1", "acks_all"), _get(t, "course", "idempotent"), _get(t, "course", "acks_all")
    if one is None or idem is None or base is None:
        return None
    ratio = float(one["records_per_s"]) / float(idem["records_per_s"])
    same = _same(one, idem)
    how = "not distinguishable from" if same else ("faster than" if ratio > 1 else "slower than")
    cause = (
        "this run cannot tell the one-request window's cost from the rest of the idempotent producer's"
        if same
        else "the window alone does not account for the idempotent producer's throughput"
    )
    spin = float(one["wakeups_per_record"]) >= SPIN_FACTOR * max(float(base["wakeups_per_record"]), 1e-9)
    return (
        f"acks=all with max.in.flight=1: {one['records_per_s']:.0f} records/s, {ratio:.0%} of the idempotent "
        f"producer's ({how}): {cause}; it wakes {one['wakeups_per_record']:.2f} times per record "
        f"({'a spin without idempotence' if spin else 'no spin: the spin belongs to the idempotence path'})."
    )


def verdicts(t: pd.DataFrame) -> list[str]:
    """One sentence per control the run measured, decided from its medians."""
    found = [
        _course(t),
        _control(t, "linger100", "linger.ms=100"),
        _control(t, "p15", "15 partitions (5 per leader)"),
        _control(t, "p15s0", "15 partitions, sticky.partitioning.linger.ms=0"),
        _control(t, "p18s0", "18 partitions (6 per leader), sticky.partitioning.linger.ms=0"),
        _window(t),
    ]
    return [s for s in found if s]
