"""A step's disk view: the markers of the transaction it ended are in it, however late they landed."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from eoslab.faults import Trace
from eoslab.m03_transactions import _step

TOPIC = "txn-run"
OFFSETS = ("__consumer_offsets", 13)


def _batch(partition: str, offset: int, control: bool) -> dict[str, Any]:
    return {
        "partition": partition,
        "base_offset": offset,
        "last_offset": offset,
        "producer_id": 7,
        "producer_epoch": 0,
        "base_sequence": -1 if control else 0,
        "is_transactional": True,
        "is_control": control,
        "marker": "COMMIT" if control else None,
        "coordinator_epoch": 5 if control else None,
        "timestamp": 0,
    }


class _Lesson:
    """Just what Step.disk reads: the batches from the step's start (the cluster is never touched)."""

    cluster: Any = None
    topic = TOPIC

    def __init__(self, batches: list[dict[str, Any]]) -> None:
        self.batches = batches
        self.settled: list[list[str]] = []

    def disk(self, log_start: dict[tuple[str, int], int], pids: set[int]) -> pd.DataFrame:
        assert pids == {7}
        return pd.DataFrame(self.batches, columns=_step.DISK_COLUMNS)


def _commit_step(lesson: _Lesson, log_end: dict[tuple[str, int], int]) -> _step.Step:
    step = _step.Step(lesson, "commit_transaction")  # type: ignore[arg-type]
    step.end_mark = 2
    step.settling = {"app"}  # PrepareCommit when the step ended: its markers were still being written
    step.log_end = log_end
    step._rows = Trace([{"id": 1, "api": "EndTxn", "request": {"producer_id": 7}, "response": {"producer_id": -1}}])
    return step


def test_a_commit_step_shows_the_markers_of_partitions_it_wrote_no_data_to(monkeypatch: pytest.MonkeyPatch) -> None:
    # The data went to A and B in earlier steps; at the step's end only the offsets partition's marker had
    # reached the high watermark. A and B's markers came after: they belong to the step all the same.
    lesson = _Lesson([_batch("__consumer_offsets-13", 1, True), _batch("A", 1, True), _batch("B", 1, True)])
    monkeypatch.setattr(_step, "wait_settled", lambda cluster, ids: lesson.settled.append(ids))
    step = _commit_step(lesson, {(TOPIC, 0): 1, (TOPIC, 1): 1, OFFSETS: 2})
    disk = step.disk()
    assert sorted(disk["partition"]) == ["A", "B", "__consumer_offsets-13"]
    assert disk["is_control"].all()
    assert lesson.settled == [["app"]]  # read once the coordinator had written every marker


def test_a_partition_the_step_closed_gets_no_later_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    # A's marker is inside the step; the control batch after it belongs to a later transaction.
    lesson = _Lesson([_batch("A", 1, False), _batch("A", 2, True), _batch("A", 3, False), _batch("A", 4, True)])
    monkeypatch.setattr(_step, "wait_settled", lambda cluster, ids: None)
    step = _commit_step(lesson, {(TOPIC, 0): 3, (TOPIC, 1): 0, OFFSETS: 0})
    assert step.disk()["base_offset"].tolist() == [1, 2]
