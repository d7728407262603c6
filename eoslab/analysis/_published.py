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
    tolerance: float  # |ours − published| within this reads as "agrees" (2-core noise is large)
    source: str
    why_differ: str


PUBLISHED = (
    Published(
        "transactional, 1 KB records, 100 ms commit interval: ≈ 3 % throughput loss",
        "txn_100ms",
        0.03,
        0.05,
        'Confluent, "Transactions in Apache Kafka" (Apurva Mehta, Jason Gustafson), 2017',
        "measured on dedicated brokers with many producer threads; here one producer, 6 JVMs on 2 cores, "
        "and librdkafka's v1 protocol adds an AddPartitionsToTxn round trip per transaction",
    ),
    Published(
        "idempotent vs acks=all: no measurable difference",
        "idempotent",
        0.0,
        0.05,
        "Kafka: The Definitive Guide, 2nd ed. (Shapira et al.), ch. 8",
        "the header carries producer id, epoch and sequence with or without idempotence (no extra bytes); "
        "what differs is max.in.flight ≤ 5 and the broker's sequence check",
    ),
    Published(
        "read_committed costs latency, not throughput",
        "read_committed",
        None,
        0.0,
        'Confluent, "Transactions in Apache Kafka", 2017',
        "a read_committed consumer waits for the commit marker (the LSO), so its latency grows with the "
        "commit interval; it reads the same bytes",
    ),
)


def compare(overheads: pd.DataFrame, e2e: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per published claim: the published value, ours (median over runs), and whether they agree.

    ``overheads``: label → median overhead (pandas, from :func:`overhead_spread`); ``e2e``: the
    pandas result of :func:`e2e_by_commit_interval`, for the read_committed claim.
    """
    med = dict(zip(overheads["label"], overheads["median"], strict=False))
    rows = []
    for p in PUBLISHED:
        if p.value is not None:
            ours = med.get(p.mode)
            agrees = None if ours is None else abs(ours - p.value) <= p.tolerance
            rows.append(
                {
                    "claim": p.claim,
                    "published": f"{p.value:+.0%}",
                    "ours": "not measured" if ours is None else f"{ours:+.1%}",
                    "agrees": agrees,
                    "source": p.source,
                    "why they may differ": p.why_differ,
                }
            )
        else:
            ours_text, agrees = "not measured", None
            if e2e is not None and len(e2e):
                t = e2e[e2e["commit_ms"] > 0].pivot_table(index="commit_ms", columns="isolation", values="p50")
                if {"read_committed", "read_uncommitted"} <= set(t.columns):
                    ratio = (t["read_committed"] / t["read_uncommitted"]).median()
                    ours_text = f"e2e p50 read_committed / read_uncommitted = {ratio:.2f}× (transactional runs)"
                    agrees = bool(ratio >= 1.0)
            rows.append(
                {
                    "claim": p.claim,
                    "published": "latency ↑, throughput =",
                    "ours": ours_text,
                    "agrees": agrees,
                    "source": p.source,
                    "why they may differ": p.why_differ,
                }
            )
    return pd.DataFrame(rows)
