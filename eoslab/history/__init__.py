"""Histories of what the pipeline's processors did, and the checker that judges them.

A processor records every poll, delivery report, commit, abort and assignment as one JSON line
(:class:`HistoryWriter`; a process killed mid-write loses at most that line, and
:func:`read_history` drops it). After the run, the output is read to its end at both isolation
levels (:func:`read_both`, :class:`FinalRead`), and :func:`check` names and counts what went wrong,
with Jepsen's Kafka checker's names (:data:`ANOMALIES` says where each comes from)::

    verdict = check(["runs/h/eos-1.jsonl", "runs/h/eos-2.jsonl"], read_both(cluster, "out"),
                    inputs=read_final(cluster, "in", "read_committed"))
    verdict.counts          # {'lost_write': 0, 'duplicate': 0, 'aborted_read': 0, ...}
    verdict                 # a table with examples in a notebook

``check`` is a pure function of files: bench, the notebooks and the lab's grading call it on what
the processes left behind, never on the processes themselves.
"""

from eoslab.history._anomalies import ANOMALIES, AnomalyKind
from eoslab.history._causes import CAUSES, Cause, CauseKind
from eoslab.history._check import check
from eoslab.history._events import (
    Aborted,
    Assigned,
    Committed,
    Event,
    Failed,
    HistoryFormatError,
    Polled,
    Position,
    Sent,
    from_json,
    text,
    to_json,
)
from eoslab.history._final import FINAL_READ_TIMEOUT, ISOLATIONS, FinalRead, ReadRecord, read_both, read_final
from eoslab.history._log import History, HistoryWriter, read_history
from eoslab.history._verdict import MAX_EXAMPLES, Cases, Verdict

__all__ = [
    "ANOMALIES",
    "Aborted",
    "AnomalyKind",
    "Assigned",
    "CAUSES",
    "Cases",
    "Cause",
    "CauseKind",
    "Committed",
    "Event",
    "FINAL_READ_TIMEOUT",
    "Failed",
    "FinalRead",
    "History",
    "HistoryFormatError",
    "HistoryWriter",
    "ISOLATIONS",
    "MAX_EXAMPLES",
    "Polled",
    "Position",
    "ReadRecord",
    "Sent",
    "Verdict",
    "check",
    "from_json",
    "read_both",
    "read_final",
    "read_history",
    "text",
    "to_json",
]
