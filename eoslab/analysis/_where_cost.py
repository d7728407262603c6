"""Where a mode's cost goes, for one run: the machine's core time per record split into the CPU each kind of
process spent (client, brokers, controllers: :func:`eoslab.runs.cpu_table`, over the same windows as the
throughput) and the rest, the cores' idle time while the mode ran: waiting.

On ``cores`` cores, a record at ``r`` records/s takes ``cores × 10⁶ / r`` core-µs of the machine; the
processes spent ``client + brokers + controllers`` of them, and the rest the cores were idle (or ran something
else: the load the run started with counts here too). Against acks_all, a mode's extra core time per record
is then exactly its extra CPU per kind plus its extra idle time. With idempotence librdkafka keeps one
batch per partition in flight (a cap of 5 messages per partition, and batches of dozens of records), so the
client waits for acknowledgements it would otherwise overlap: that shows as idle cores, not CPU.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from eoslab.analysis._module06 import Figures
from eoslab.runs import BASELINE, CPU_KINDS

if TYPE_CHECKING:
    from matplotlib.axes import Axes

NOT_MEASURED = (
    "The brokers' and controllers' CPU is not measured on the {backend} backend (their processes are not this "
    "machine's to read), so this run splits only the client's share; the rest of the core time is unaccounted for."
)
MORE = 1.10
"""A figure 10 % above the baseline's is called more, 10 % below less: CPU per record moves by that much."""
CAP = (
    "with idempotence librdkafka keeps one batch per partition in flight (its cap of 5 messages per partition, "
    "batches of dozens of records), so the client waits for acknowledgements it would otherwise overlap"
)
COMMIT = (
    "; a transaction also waits for its commit (commit_transaction() drains the buffer, then EndTxn is answered) "
    "before the next one begins"
)
"""Added to :data:`CAP` for a transactional mode: its waiting is the cap's and its commits'."""


def core_time(fig: Figures, client: str = "eoslab") -> pd.DataFrame:
    """Per mode (the run's order): µs of CPU per record of each kind (NaN: not measured), ``records_per_s``
    (median over rounds), ``core_us`` (the machine's core-µs per record at that rate) and ``idle`` (what the
    kinds measured did not spend; NaN unless every kind was measured)."""
    cpu = fig.cpu[fig.cpu["client"] == client] if len(fig.cpu) else fig.cpu
    us = cpu.pivot_table(index="label", columns="kind", values="us_per_record") if len(cpu) else pd.DataFrame()
    labels = list(dict.fromkeys(fig.modes["label"]))
    out = us.reindex(index=labels, columns=list(CPU_KINDS)).astype(float)
    rps = fig.modes.drop_duplicates("label").set_index("label")["records_per_s"].reindex(labels).astype(float)
    out["records_per_s"] = rps
    out["core_us"] = float(fig.env.get("cores", math.nan)) * 1e6 / rps
    out["idle"] = out["core_us"] - out[list(CPU_KINDS)].sum(axis=1, skipna=False)
    out.index.name = "label"
    return out


def extra_core_time(fig: Figures) -> pd.DataFrame:
    """Per mode but acks_all: its extra core time per record over acks_all's (``extra_core_us``), split into
    extra CPU per kind and extra idle time (``waiting``); NaN where a kind was not measured."""
    t = core_time(fig)
    if BASELINE not in t.index:
        return pd.DataFrame(columns=["extra_core_us", *CPU_KINDS, "waiting"])
    d = t.drop(index=BASELINE) - t.loc[BASELINE]
    out = d[["core_us", *CPU_KINDS, "idle"]].rename(columns={"core_us": "extra_core_us", "idle": "waiting"})
    return out[out.index != "acks1"]  # acks1 is another durability: no question of cost against acks_all


def _ratio(x: float, base: float) -> str:
    if math.isnan(x) or math.isnan(base) or base <= 0:
        return "—"
    word = "more than" if x > base * MORE else "less than" if x < base / MORE else "about as much as"
    return f"{x:.1f} µs ({x / base:.1f}×, {word} acks_all)"


def _kind_sentence(t: pd.DataFrame, kind: str, modes: list[str]) -> str | None:
    base = float(t.loc[BASELINE, kind]) if BASELINE in t.index else math.nan
    if math.isnan(base):
        return None
    each = "; ".join(f"{m} {_ratio(float(t.loc[m, kind]), base)}" for m in modes)
    return f"{kind.capitalize()} CPU per record, against acks_all's {base:.1f} µs: {each}."


def _split_sentence(label: str, r: pd.Series, transactional: bool = False) -> str:
    """One mode's extra core time per record, split; which share dominates is read off the figures. A
    transactional mode's waiting names its commits beside the in-flight cap."""
    extra, wait = float(r["extra_core_us"]), float(r["waiting"])
    cpu = extra - wait
    parts = ", ".join(f"{k} {float(r[k]):+.1f}" for k in CPU_KINDS)
    head = f"{label}: each record took {extra:+.1f} core-µs against acks_all ({parts} µs of CPU, {wait:+.1f} idle)"
    if extra <= 0:
        return head + ": no loss to split in this run."
    if wait <= 0:
        return head + ": the extra CPU fills all of it, so in this run the loss is CPU (the cores were busier)."
    why = CAP + (COMMIT if transactional else "")
    if wait >= cpu:
        return head + f": most of the loss is waiting, with cores idle: {why}."
    return head + f": most of the loss is CPU, the rest ({wait / extra * 100:.0f} %) waiting: {why}."


def cpu_sentences(fig: Figures) -> list[str]:
    """What one run's CPU figures say: each kind's CPU per record against acks_all's for the idempotent and
    transactional modes, and each mode's extra core time split into CPU and waiting (when every kind was
    measured; on docker, one sentence says the brokers are not)."""
    if fig.cpu.empty:
        return ["This run recorded no CPU figures (it was measured before they were recorded)."]
    t = core_time(fig)
    modes = [m for m in t.index if m not in (BASELINE, "acks1")]
    out = [s for k in CPU_KINDS if (s := _kind_sentence(t, k, modes)) is not None]
    if t[list(CPU_KINDS)].isna().all(axis=0).any():
        out.append(NOT_MEASURED.format(backend=fig.env.get("backend", "docker")))
        return out
    txn = set(fig.modes.loc[fig.modes["mode"] == "transactional", "label"]) if "mode" in fig.modes else set()
    out += [_split_sentence(m, r, m in txn) for m, r in extra_core_time(fig).iterrows() if not pd.isna(r["waiting"])]
    load = fig.env.get("load1_at_start", math.nan)
    out.append(
        f"Idle here means not spent by the cluster or the client: this run started at load {load} on "
        f"{fig.env.get('cores', '?')} cores, and whatever else ran counts as idle too."
    )
    return out


def plot_core_time(fig: Figures, ax: Axes | None = None) -> Axes:
    """Per mode, a stacked bar of the machine's core-µs per record: client, brokers, controllers, idle
    (kinds not measured are left out, and idle with them); one run, named in the legend."""
    import matplotlib.pyplot as plt

    if ax is None:
        ax = plt.subplots(figsize=(7, 3.2))[1]
    t = core_time(fig)
    kinds = [k for k in CPU_KINDS if t[k].notna().any()]
    parts = kinds + (["idle"] if t["idle"].notna().any() else [])
    bottom = pd.Series(0.0, index=t.index)
    for part in parts:
        y = t[part].clip(lower=0).fillna(0)
        hatch = "//" if part == "idle" else None
        ax.bar(t.index, y, bottom=bottom, label=part, hatch=hatch, fill=part != "idle", edgecolor="grey")
        bottom += y
    ax.set_ylabel("core-µs per record")
    ax.set_title("Core time per record, by process kind")
    ax.tick_params(axis="x", rotation=30)
    ax.legend(fontsize=7, title=f"run {fig.run}", title_fontsize=7)
    return ax
