"""The checker's causes on histories recorded on the cluster (tests/data/history/: one run of each of lab 07's
mistakes, ``eoslab.m07_production.lesson.run_program``, with the final reads it saved), and on hand-made ones:
each mistake is named and blamed for what it did, a right run and an at-least-once twin are blamed for nothing.

The recorded runs were made with Kafka 4.1.2 and confluent-kafka 2.16.1 on the course's cluster; the counts
depend on where a batch was cut, so the tests assert what they mean, not the numbers."""

from __future__ import annotations

from pathlib import Path

import pytest
from _histories import Run, clean_run, inputs_read

from eoslab.history import CAUSES, Committed, Failed, FinalRead, HistoryFormatError, check, read_history
from eoslab.m07_production.lesson import origins

DATA = Path(__file__).resolve().parents[1] / "data" / "history"


def _judge(case: str, *, writer: bool = False):
    folder = DATA / case
    histories = sorted(h for h in folder.glob("*.jsonl") if writer or h.name != "writer.jsonl")
    inputs = FinalRead.load(folder / "input-read_committed.json")
    reads = [FinalRead.load(folder / f"output-{i}.json") for i in ("read_committed", "read_uncommitted")]
    return check(histories, reads, inputs=inputs, origin=origins(inputs))


def test_auto_commit_is_blamed_for_every_input_its_crash_left_without_output():
    v = _judge("auto_commit")
    cause = v.cause("offsets_outside_txn")
    assert cause is not None and v.count("missing_output") > 0
    assert cause.blamed["missing_output"] == v.count("missing_output")
    assert any("auto commit" in e for e in cause.examples)
    assert v.found == {"missing_output": v.count("missing_output")}  # nothing else went wrong


def test_a_commit_after_the_transaction_is_blamed_for_the_duplicates_its_crash_made():
    v = _judge("commit_outside")
    cause = v.cause("offsets_outside_txn")
    assert cause is not None and v.count("duplicate") > 0
    assert cause.blamed["duplicate"] == v.count("duplicate")
    assert any("commit()" in e for e in cause.examples)


def test_a_batch_longer_than_the_poll_interval_names_the_consumer_that_left_its_group():
    v = _judge("slow_batch")
    cause = v.cause("left_group")
    assert cause is not None and cause.count >= 1
    assert any("left its group" in e and "maximum poll interval" in e for e in cause.examples), cause.examples
    assert cause.blamed["aborted_transaction"] >= 1
    assert v.stats["committed txns"] == 0  # stalled: nothing got through
    assert v.cause("fenced") is None and v.cause("offsets_outside_txn") is None


def test_two_instances_of_one_transactional_id_are_named_fenced_once_per_incarnation():
    v = _judge("shared_id")
    cause = v.cause("fenced")
    assert cause is not None and cause.count >= 2
    fenced = {e.process for h in (DATA / "shared_id").glob("*-*.jsonl") for e in read_history(h).events
              if isinstance(e, Failed) and e.fatal and e.error == "_FENCED"}  # fmt: skip
    assert cause.count == len(fenced)
    assert any("transactional.id orders-processor" in e for e in cause.examples)
    assert {a for a, n in v.found.items() if n} <= {"missing_output"}  # fencing kept the data exactly once


def test_reading_the_input_uncommitted_is_an_aborted_read_with_no_cause_of_these():
    v = _judge("read_uncommitted", writer=True)  # the writer's history says which inputs aborted
    assert v.count("aborted_read") > 0
    assert v.causes == ()


def test_without_the_writers_history_the_aborted_inputs_are_not_seen_as_aborted():
    assert _judge("read_uncommitted").count("aborted_read") == 0  # the checker judges what it is given


def test_a_right_run_and_an_at_least_once_twin_are_blamed_for_nothing():
    run = clean_run()
    assert check([run.events], run.reads(), inputs=inputs_read()).causes == ()
    alo = Run(process="alo-1")
    alo.poll(0, 0)
    alo.send(None, 0, (0, 0))
    alo.commit(None, p0=1)  # an at-least-once processor commits outside transactions: that is its design
    assert any(isinstance(e, Committed) and e.txn is None for e in alo.events)
    assert check([alo.events], alo.reads()).causes == ()


def test_causes_render_in_text_and_html_and_an_unknown_name_is_refused():
    v = _judge("auto_commit")
    assert "cause: offsets committed outside a transaction" in str(v)
    assert "causes the histories show" in v._repr_html_()
    with pytest.raises(HistoryFormatError):
        v.cause("bad_luck")
    assert list(CAUSES) == ["offsets_outside_txn", "left_group", "fenced"]
