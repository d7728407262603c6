"""Lab 03's checks, cut into pieces (issue 22), each on what it decides, without a cluster: a learner's call that
raised, and what a zombie worker did wrong."""

from __future__ import annotations

from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from eoslab.labcheck import CheckFailed
from eoslab.m03_transactions import lab as lab03

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
