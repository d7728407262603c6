"""The pieces the long graded checks were cut into (issue 22), each on what it decides, without a cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from eoslab.classroom import _gradebook, collect
from eoslab.errors import EoslabError
from eoslab.grading import lab03
from eoslab.labcheck import CheckFailed

# -- the gradebook grades what has no report, and a broken notebook costs only its learner ------------


def test_collect_grades_unreported_notebooks_and_a_broken_one_is_a_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graded: list[tuple[str, float, int]] = []

    def fake_grade(nb: Path, *, timeout: float, cell_timeout: int) -> None:
        graded.append((f"{nb.parent.name}/{nb.name}", timeout, cell_timeout))
        if nb.parent.name == "bo":
            raise EoslabError(f"{nb.name} did not finish within {timeout:g} s: it was stopped and scores 0.")

    monkeypatch.setattr(_gradebook, "grade_notebook", fake_grade)
    for learner in ("ana", "bo"):
        (tmp_path / learner).mkdir()
        (tmp_path / learner / "lab01_x.ipynb").write_text("{}")
    said: list[str] = []
    rows = collect(tmp_path, limit=9.0, cell_timeout=4, progress=said.append)
    assert graded == [("ana/lab01_x.ipynb", 9.0, 4), ("bo/lab01_x.ipynb", 9.0, 4)]
    assert said == ["grading ana/lab01_x.ipynb ...", "grading bo/lab01_x.ipynb ..."]
    # ana's grading wrote no report here (the fake): nothing handed in; bo's broke: its error, score 0
    assert [(r["learner"], r["notebook"], r["score"]) for r in rows] == [("ana", None, 0), ("bo", "lab01_x.ipynb", 0)]
    assert rows[1]["error"] == "lab01_x.ipynb did not finish within 9 s: it was stopped and scores 0."


# -- lab 03 tasks 2 and 4: a learner's call that raised, and what a zombie worker did wrong ----------


def test_a_transfer_outside_a_transaction_is_told_to_begin_one() -> None:
    with pytest.raises(CheckFailed, match=r"begin_transaction\(\) first"):
        lab03._transfer_raised(KafkaException(KafkaError(KafkaError._STATE)))
    with pytest.raises(CheckFailed, match=r"your transfer raised ValueError: no\. Hint: see the error"):
        lab03._transfer_raised(ValueError("no"))


def test_zombie_problems_name_each_fault() -> None:
    assert lab03._zombie_problems(0, {"ok": True}, ["a", "s"], ["s", "a"]) == []
    problems = lab03._zombie_problems(2, {"ok": False, "error": "FENCED"}, ["a", "x", "s"], ["a", "s"])
    assert problems == [
        "after the fatal error your worker went on to 2 more batch(es)",
        "the legitimate successor could not commit (FENCED): it was fenced",
        "read_committed shows ['a', 'x', 's']",
    ]


def test_a_worker_that_stops_at_the_fence_is_told_from_one_that_returns() -> None:
    def fenced(make_producer: Any, batches: Any, topic: str) -> None:
        raise KafkaException(KafkaError(KafkaError._FENCED, fatal=True))

    def retriable(make_producer: Any, batches: Any, topic: str) -> None:
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT))

    assert lab03._run_worker(lambda *a: None, lambda: None, None, "t") == "returned"  # type: ignore[arg-type]
    assert lab03._run_worker(fenced, lambda: None, None, "t") == "raised _FENCED"  # type: ignore[arg-type]
    with pytest.raises(KafkaException):  # not fatal: the check's guard reports it, as before
        lab03._run_worker(retriable, lambda: None, None, "t")  # type: ignore[arg-type]
