"""Published figures to hold the learner's numbers against, with where each comes from.

They were measured on other machines, other versions and other settings; the point of
putting them beside the learner's is to ask why they differ, not to grade the laptop.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Published:
    claim: str
    mode: str
    value: float | None  # throughput overhead as a fraction; None: a qualitative claim
    source: str
    why_differ: str


PUBLISHED = (
    Published(
        "transactional, 1 KB records, 100 ms commit interval: ≈ 3 % throughput loss",
        "txn_100ms",
        0.03,
        'Confluent, "Exactly-once Semantics are Possible: Here\'s How Kafka Does it" (Neha Narkhede), 2017; '
        '"Transactions in Apache Kafka" (Apurva Mehta, Jason Gustafson, 2017) gives the same 3 % without a baseline',
        "measured with Kafka 0.11's Java client against acks=all with max.in.flight.requests.per.connection=1 "
        "(this kit's acks_all keeps 5 in flight; against acks=1 the same tests lost 20 %), hardware unpublished; "
        "here one librdkafka producer and 6 JVMs share 2 cores, librdkafka's v1 protocol adds an "
        "AddPartitionsToTxn round trip per transaction, its idempotent producer keeps one request in flight per "
        "partition, and a commit flushes the client's buffer first",
    ),
    Published(
        "idempotent vs acks=all: no measurable difference",
        "idempotent",
        0.0,
        "Kafka: The Definitive Guide, 2nd ed. (Shapira et al.), ch. 8",
        "the header carries producer id, epoch and sequence with or without idempotence (no extra bytes); "
        "what differs is max.in.flight ≤ 5 and the broker's sequence check; librdkafka's idempotent producer "
        "sends one full batch per partition at a time (eoslab bench wire shows it)",
    ),
    Published(
        "read_committed costs latency, not throughput",
        "read_committed",
        None,
        'Confluent, "Transactions in Apache Kafka", 2017',
        "a read_committed consumer waits for the commit marker (the LSO), so its latency grows with the "
        "commit interval; it reads the same bytes",
    ),
)


def _verdict(value: float, lo: float | None, hi: float | None) -> tuple[bool | None, str]:
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return None, "no interval (too few rounds)"
    if lo <= value <= hi:
        return True, "inside this run's interval" + (" (which also holds 0)" if lo <= 0 <= hi and value != 0 else "")
    return False, "outside this run's interval"


def compare(overheads: pd.DataFrame, e2e: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per published claim: the published value, ours with its interval, and whether the
    published value lies inside our interval.

    ``overheads``: one run's overheads (pandas, from :func:`eoslab.analysis.overhead` or a
    :class:`~eoslab.analysis.RunFigures`' ``modes``): ``label``, ``median`` (or ``overhead``), ``lo``, ``hi``
    (or ``overhead_lo``/``overhead_hi``); ``e2e``: the pandas result of :func:`e2e_by_commit_interval`.
    """
    ov = overheads.rename(columns={"overhead": "median", "overhead_lo": "lo", "overhead_hi": "hi"})
    by = {r["label"]: r for _, r in ov.iterrows()}
    rows = []
    for p in PUBLISHED:
        if p.value is not None:
            r = by.get(p.mode)
            if r is None:
                ours, agrees, how = "not measured", None, ""
            else:
                lo, hi = r.get("lo"), r.get("hi")
                agrees, how = _verdict(p.value, lo, hi)
                span = "" if lo is None or pd.isna(lo) else f" [{lo:+.1%}, {hi:+.1%}]"
                ours = f"{r['median']:+.1%}{span}"
            rows.append(
                {
                    "claim": p.claim,
                    "published": f"{p.value:+.0%}",
                    "ours (95 % interval)": ours,
                    "agrees": agrees,
                    "verdict": how,
                    "source": p.source,
                    "why they may differ": p.why_differ,
                }
            )
        else:
            ours_text, agrees, how = "not measured", None, ""
            if e2e is not None and len(e2e):
                t = e2e[e2e["commit_ms"] > 0].pivot_table(index="commit_ms", columns="isolation", values="p50")
                if {"read_committed", "read_uncommitted"} <= set(t.columns):
                    ratio = (t["read_committed"] / t["read_uncommitted"]).median()
                    ours_text = f"e2e p50 read_committed / read_uncommitted = {ratio:.2f}× (transactional runs)"
                    agrees = bool(ratio >= 1.0)
                    how = "read_committed waits longer" if agrees else "read_committed did not wait longer"
            rows.append(
                {
                    "claim": p.claim,
                    "published": "latency ↑, throughput =",
                    "ours (95 % interval)": ours_text,
                    "agrees": agrees,
                    "verdict": how,
                    "source": p.source,
                    "why they may differ": p.why_differ,
                }
            )
    return pd.DataFrame(rows)
