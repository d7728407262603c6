"""The sentences a run supports (``takeaways``), each decided by its intervals, never fixed text: an overhead is
called a cost only when its interval excludes 0, a difference between commit intervals only when their intervals
do not overlap, and a run whose intervals are wider than the effect it is asked about says so, and what would help.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import pandas as pd

from eoslab.analysis._published import PUBLISHED, peer_idempotent_rates
from eoslab.runs import BASELINE, IDEMPOTENT_NOTE


class Figures(Protocol):
    """What the sentences read of a run's figures (:class:`eoslab.analysis.RunFigures` has them)."""

    env: pd.Series
    modes: pd.DataFrame
    vs_idempotent: pd.DataFrame
    resolvable: float
    rounds: int
    round_s: float
    java: pd.DataFrame
    cpeer: pd.DataFrame


PUBLISHED_EFFECT = 0.03
"""The published cost of 100 ms commits (Confluent, 1 KB records): the effect a run's resolution is held against."""
LAPTOP_ROUNDS_S = 900.0
"""The longest stretch of rounds a laptop run is asked for: the long quiet run's (15 rounds of 60 s,
docs/benchmarks-producers.md). At the default matrix's round (~20-25 s measured) that is about 40 rounds."""
IDEMPOTENT = "idempotent"
"""The second baseline: a transactional mode against it has the same in-flight rule, so the difference is what
the transaction itself adds."""


def pct(x: float) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.1%}"


def interval(lo: Any, hi: Any) -> str:
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return "no interval"
    return f"[{lo:+.1%}, {hi:+.1%}]"


def overhead_verdict(row: pd.Series, baseline: str = BASELINE) -> str:
    """A mode's overhead against ``baseline`` in words, decided by its interval (a row of :func:`overhead`, of
    ``RunFigures.modes`` or of ``RunFigures.vs_idempotent``)."""
    if row["label"] == baseline:
        return "baseline"
    if row.get("resolved") is None or pd.isna(row.get("resolved")):
        return f"too few rounds for an interval ({int(row['rounds'])})"
    if not bool(row["resolved"]):
        return "not resolved by this run"
    return f"slower than {baseline}" if row.get("overhead", row.get("median")) > 0 else f"faster than {baseline}"


def rounds_for(f: Figures, effect: float) -> int:
    """Rounds a run like ``f`` would need to resolve ``effect``: a bootstrap interval's half-width shrinks
    as 1/√rounds (at least 3 rounds: below that there is no interval)."""
    return max(3, math.ceil(f.rounds * (f.resolvable / effect) ** 2))


def laptop_rounds(f: Figures) -> int:
    """The most rounds a laptop run of ``f``'s matrix holds: :data:`LAPTOP_ROUNDS_S` over its measured round
    time (0 when the run does not say how long its rounds took)."""
    return int(LAPTOP_ROUNDS_S // f.round_s) if f.round_s > 0 else 0


def _resolution(f: Figures) -> list[str]:
    """What size of effect this run can tell from zero, against the published 3 %, and what would resolve it:
    more rounds of the same slices when a laptop run holds them, else what the machine lacks."""
    if math.isnan(f.resolvable):
        return []
    lead = f"This run ({f.rounds} rounds) resolves overheads larger than about ±{f.resolvable:.1%}: "
    if f.resolvable < PUBLISHED_EFFECT:
        return [lead + "enough for the published ≈ 3 % (Confluent, 1 KB records, 100 ms commits)."]
    k, most = rounds_for(f, PUBLISHED_EFFECT), laptop_rounds(f)
    lead += "a 3 % effect (the published figure) is below what it can tell from zero; intervals narrow as 1/√rounds, "
    if 0 < k <= most:
        seconds = f.env.get("seconds", math.nan)
        flag = "" if pd.isna(seconds) else f" --seconds {float(seconds):g}"
        return [
            lead + f"so about {k} rounds of the same slices would resolve it, {k * f.round_s / 60:.0f} min of rounds "
            f"(`eoslab bench producers --rounds {k}{flag}`)."
        ]
    if math.isnan(f.round_s):
        return [lead + f"so about {k} rounds would resolve it."]
    return [
        lead + f"so it would take about {k} rounds, and a laptop run holds about {most} ({LAPTOP_ROUNDS_S / 60:.0f} "
        f"min of {f.round_s:.0f} s rounds): at this noise a 3 % effect is beyond this machine's resolution. What "
        "would help: a quieter machine (nothing else running, the load below 1) and fewer JVMs per core (the "
        "cluster's six on more cores)."
    ]


def _idempotence(m: pd.DataFrame) -> list[str]:
    """Idempotence's overhead, in words its interval supports."""
    if "idempotent" not in m.index:
        return []
    r = m.loc["idempotent"]
    verdict = overhead_verdict(r)
    measured = f"Idempotence vs acks=all: {pct(r['overhead'])} {interval(r['overhead_lo'], r['overhead_hi'])}"
    if verdict == "not resolved by this run":
        return [f"{measured}, not resolved by this run: the data cannot tell it from no cost."]
    if "slower" in verdict:
        return [
            f"{measured}: a cost this run resolves; the bytes are the same (every v2 batch carries producer id, "
            "epoch and sequence), so look at the client: " + IDEMPOTENT_NOTE + "."
        ]
    if "faster" in verdict:
        return [
            f"{measured}: faster than the baseline in this run, an effect of the machine rather than of idempotence."
        ]
    return [f"Idempotence vs acks=all: {verdict}."]


def _peer_losses(f: Figures) -> list[str]:
    """What idempotence cost each peer in this run (one window per mode, so no interval): beside the harness's
    figure, whether the library itself pays it (rdkafka_performance: librdkafka without Python) or the Java
    client does. Nothing when no peer measured both acks_all and idempotent."""
    found = []
    for name, table, rate in (
        ("librdkafka's own rdkafka_performance", f.cpeer, "c"),
        ("Kafka's Java producer-perf-test", f.java, "java"),
    ):
        both = peer_idempotent_rates(table, rate)
        if both is not None:
            base, idem = both
            found.append(f"{name} {pct(1 - idem / base)} ({base:,.0f} → {idem:,.0f} records/s)")
    if not found:
        return []
    return [
        "Idempotence against acks=all for the peers of this run, one window per mode (no interval: a hint, not a "
        "figure): " + "; ".join(found) + "."
    ]


def _stated(r: pd.Series) -> str:
    return f"{r['label']} {pct(r['overhead'])} {interval(r['overhead_lo'], r['overhead_hi'])}"


def _on_top_of_idempotence(t: pd.DataFrame) -> list[str]:
    """What the transaction itself adds (each transactional mode against idempotent, the same in-flight rule),
    in words its intervals support: the modes it resolves as a cost, as faster, and those it does not resolve."""
    by: dict[str, list[pd.Series]] = {"slower": [], "faster": [], "open": []}
    for _, r in t.iterrows():
        v = overhead_verdict(r, IDEMPOTENT).split(" ")[0]
        by[v if v in by else "open"].append(r)
    out = []
    if by["slower"]:
        out.append(
            f"Transactions add {', '.join(map(_stated, by['slower']))} on top of idempotence (the same in-flight "
            "rule: the transaction's own cost)."
        )
    if by["faster"]:
        out.append(
            f"Against idempotence, {', '.join(map(_stated, by['faster']))}: faster in this run, an effect of "
            "the machine."
        )
    if by["open"]:
        few = all(pd.isna(r["resolved"]) for r in by["open"])
        out.append(
            f"Transactions vs idempotence: {', '.join(map(_stated, by['open']))}: "
            + ("too few rounds for an interval." if few else "not resolved by this run.")
        )
    return out


def _commit_intervals(m: pd.DataFrame) -> list[str]:
    """Whether a longer commit interval costs less: only when the shortest's and the longest's intervals
    do not overlap."""
    txn = m[m["mode"] == "transactional"].sort_values("commit_ms") if "mode" in m else m.iloc[0:0]
    if len(txn) < 2:
        return []
    short, long_ = txn.iloc[0], txn.iloc[-1]
    apart = (
        short["overhead_lo"] is not None
        and not pd.isna(short["overhead_lo"])
        and not pd.isna(long_["overhead_hi"])
        and short["overhead_lo"] > long_["overhead_hi"]
    )
    if apart:
        return [
            f"Transactions: committing every {int(short['commit_ms'])} ms costs {pct(short['overhead'])}, every "
            f"{int(long_['commit_ms'])} ms {pct(long_['overhead'])}, and the intervals do not overlap: the longer "
            "the commit interval, the smaller the cost (a commit drains the client's buffer and waits for EndTxn)."
        ]
    a, b = txn.index[0], txn.index[-1]
    first = f"{a} {pct(short['overhead'])} {interval(short['overhead_lo'], short['overhead_hi'])}"
    last = f"{b} {pct(long_['overhead'])} {interval(long_['overhead_lo'], long_['overhead_hi'])}"
    return [
        f"Transactions: {first} and {last}: their intervals overlap, so this run cannot say that a longer "
        "commit interval costs less."
    ]


def _against_published(m: pd.DataFrame) -> list[str]:
    """The 100 ms commits held against the published ≈ 3 %, and how long such a transaction really lasted."""
    if "txn_100ms" not in m.index:
        return []
    r = m.loc["txn_100ms"]
    lo, hi = r["overhead_lo"], r["overhead_hi"]
    if pd.isna(lo):
        out = ["The published ≈ 3 % for 100 ms commits: this run has no interval to hold it against."]
    elif lo <= 0.03 <= hi:
        out = [
            f"The published ≈ 3 % for 100 ms commits lies inside this run's interval {interval(lo, hi)}: "
            "consistent" + (", though the interval also holds 0." if lo <= 0 else ".")
        ]
    else:
        out = [
            f"The published ≈ 3 % for 100 ms commits lies outside this run's interval {interval(lo, hi)} "
            f"(measured {pct(r['overhead'])}); " + next(p.why_differ for p in PUBLISHED if p.mode == "txn_100ms") + "."
        ]
    if not pd.isna(r.get("transaction_ms", math.nan)):
        out.append(
            f"A '100 ms' transaction really lasted {r['transaction_ms']:.0f} ms at saturation: the commit "
            "flushes what the client had buffered (buffer.memory / queue.buffering.max.kbytes) before EndTxn."
        )
    return out


def takeaways(f: Figures) -> list[str]:
    """The sentences this run supports, each decided by its intervals (never fixed text)."""
    m = f.modes.set_index("label", drop=False)
    return [
        *_resolution(f),
        *_idempotence(m),
        *_peer_losses(f),
        *_on_top_of_idempotence(f.vs_idempotent),
        *_commit_intervals(m),
        *_against_published(m),
    ]
