"""The anomalies the checker names, named as Jepsen's Kafka checker names them, and where from.

Source: jepsen-io/jepsen, ``jepsen/src/jepsen/tests/kafka.clj`` (read at commit c4c7473d, the file last
changed in 79c56d93). Its ``analysis`` function collects the error types ``:lost-write``
(``lost-write-cases``), ``:duplicate`` (``duplicate-cases``), ``:G1a`` (``g1a-cases``, "aborted
reads, where a known-failed write is nonetheless visible to a committed read"),
``:inconsistent-offsets`` (the ``:errors`` of ``version-orders``: one key and offset, several values),
``:nonmonotonic-poll`` (``poll-skip+nonmonotonic-cases``) and ``:unseen`` (``unseen``: acknowledged,
never polled). Torn transactions are not a type of that checker: the name is from Jepsen's
*Bufstream 0.1.0* analysis (2024-11-12, https://jepsen.io/analyses/bufstream-0.1.0), which found
that Kafka's transaction protocol (KAFKA-17754) allows "lost writes, aborted reads, and torn
transactions"; kafka.clj's own docstring (analysis note 7, "intermediate reads") describes the
same shape: a reader that sees some of a transaction's writes but not all. ``missing_output`` is
the kit's own: a pipeline's end-to-end check, which a queue test like Jepsen's has no use for.
"""

from __future__ import annotations

from dataclasses import dataclass

JEPSEN_KAFKA_CHECKER = "jepsen-io/jepsen jepsen/src/jepsen/tests/kafka.clj"
BUFSTREAM_ANALYSIS = "https://jepsen.io/analyses/bufstream-0.1.0"


@dataclass(frozen=True)
class AnomalyKind:
    """One kind of anomaly: its name here, its name in Jepsen, and what it means in this pipeline."""

    name: str
    label: str
    jepsen: str
    source: str
    meaning: str


ANOMALIES: dict[str, AnomalyKind] = {
    k.name: k
    for k in (
        AnomalyKind(
            "lost_write",
            "lost write",
            ":lost-write",
            f"{JEPSEN_KAFKA_CHECKER} lost-write-cases",
            "an acknowledged output of a committed transaction (or of one whose other records were read), "
            "below the end of the read_committed final read, that the read did not return",
        ),
        AnomalyKind(
            "duplicate",
            "duplicate",
            ":duplicate",
            f"{JEPSEN_KAFKA_CHECKER} duplicate-cases",
            "one input record's output visible to read_committed at more than one offset",
        ),
        AnomalyKind(
            "aborted_read",
            "aborted read (G1a)",
            ":G1a",
            f"{JEPSEN_KAFKA_CHECKER} g1a-cases",
            "a record of an aborted transaction returned to a read_committed reader",
        ),
        AnomalyKind(
            "torn_transaction",
            "torn transaction",
            "(none in kafka.clj; Bufstream analysis)",
            f"{BUFSTREAM_ANALYSIS}; {JEPSEN_KAFKA_CHECKER} analysis note 7",
            "a transaction that committed (or was seen to) of which read_committed returned some records, not all",
        ),
        AnomalyKind(
            "inconsistent_offsets",
            "inconsistent offsets",
            ":inconsistent-offsets",
            f"{JEPSEN_KAFKA_CHECKER} version-orders",
            "one offset of a partition holding two values, by any two witnesses (delivery reports, polls, reads)",
        ),
        AnomalyKind(
            "nonmonotonic_poll",
            "non-monotonic poll",
            ":nonmonotonic-poll",
            f"{JEPSEN_KAFKA_CHECKER} poll-skip+nonmonotonic-cases",
            "a process polling an offset at or before one it already polled, with no abort or assignment "
            "between that rewinds it (after an abort it may go back to its committed offset, not further)",
        ),
        AnomalyKind(
            "unseen",
            "unseen",
            ":unseen",
            f"{JEPSEN_KAFKA_CHECKER} unseen",
            "an acknowledged, committed output that no read returned, written past where the final read ended",
        ),
        AnomalyKind(
            "missing_output",
            "missing output",
            "(eoslab's own: end to end)",
            "eoslab.history",
            "an input record of the final input read whose output read_committed does not return at all",
        ),
    )
}
"""Every anomaly the checker knows, in the order it reports them."""
