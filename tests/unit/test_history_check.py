"""The history checker on hand-made histories: each anomaly flagged and counted, a clean run not flagged,
and one-event changes of the clean run that bring out exactly the anomaly they should (a checker that
cannot fail is a bug)."""

from __future__ import annotations

import dataclasses

import pytest
from _histories import IN, OUT, P, Run, clean_run, inputs_read, plus, without

from eoslab.history import (
    ANOMALIES,
    Aborted,
    Assigned,
    Committed,
    FinalRead,
    HistoryFormatError,
    Polled,
    Position,
    ReadRecord,
    check,
)


def found(verdict) -> dict[str, int]:
    return verdict.found


# --- the clean run -------------------------------------------------------------------------------


def test_the_clean_exactly_once_run_is_valid_with_every_anomaly_checked():
    r = clean_run()
    v = check([r.events], r.reads(), inputs=inputs_read())
    assert found(v) == {}, str(v)
    assert v.valid()
    assert set(v.checked) == set(ANOMALIES)  # with inputs=, missing_output is checked too
    assert v.stats["committed txns"] == 3 and v.stats["aborted txns"] == 1
    assert v.stats["read_committed records"] == 6 and v.stats["read_uncommitted records"] == 7


def test_a_transaction_whose_outcome_was_lost_with_its_process_is_not_an_anomaly_either_way():
    r = clean_run()
    events = [e for e in r.events if not (isinstance(e, Committed) and e.txn == 4)]  # killed after the commit
    rc, ru = r.reads()
    assert found(check([events], (rc, ru))) == {}  # ... and it did commit: its record is visible
    assert found(check([events], (without(rc, 1, 4), without(ru, 1, 4)))) == {}  # ... or it never did


def test_without_an_input_read_missing_output_is_not_checked_and_asking_for_it_says_so():
    r = clean_run()
    v = check([r.events], r.reads())
    assert "missing_output" not in v.checked
    with pytest.raises(HistoryFormatError, match="not checked"):
        v.count("missing_output")


# --- one event away from the clean run: exactly that anomaly -------------------------------------
# Without inputs= (missing_output would also see a lost record's input go without output), except
# for missing_output's own case.


def test_one_record_missing_from_read_committed_is_one_lost_write():
    r = clean_run()
    rc, ru = r.reads()
    v = check([r.events], (without(rc, 1, 4), ru))  # txn 4's only record
    assert found(v) == {"lost_write": 1}
    assert "out[1]@4" in v.cases["lost_write"].examples[0] and "eos-1 txn 4 (tx-A)" in v.cases["lost_write"].examples[0]


def test_a_read_committed_that_ended_early_leaves_a_committed_record_unseen_not_lost():
    r = clean_run()
    rc, ru = r.reads()
    early = dataclasses.replace(without(rc, 1, 4), ends={**rc.ends, 1: 4})
    assert found(check([r.events], (early, ru))) == {"unseen": 1}


def test_one_more_copy_of_an_output_on_the_log_is_one_duplicate():
    r = clean_run()
    rc, ru = r.reads()
    copy = ReadRecord(1, 6, "b1/t4")  # a re-send without idempotence writes the same value again
    v = check([r.events], (plus(rc, copy), plus(ru, copy)))
    assert found(v) == {"duplicate": 1}
    assert "input in[1]@1" in v.cases["duplicate"].examples[0]


def test_a_downstream_poll_of_an_aborted_record_is_one_aborted_read_g1a():
    r = clean_run()
    events = [*r.events, Polled("downstream", 2000.0, Position(OUT, 0, 3), "a2/t2")]
    v = check([events], r.reads())
    assert found(v) == {"aborted_read": 1}
    assert v.cases["aborted_read"].kind.jepsen == ":G1a"
    assert v.count("G1a") == v.count(":G1a") == v.count("aborted_read") == 1 and v.count("lost-write") == 0
    assert (
        "downstream polled 'a2/t2' at out[0]@3, written by eos-1 txn 2 (tx-A), which aborted"
        in (v.cases["aborted_read"].examples[0])
    )


def test_an_aborted_record_in_read_committed_is_an_aborted_read_and_its_retry_a_duplicate():
    r = clean_run()
    rc, ru = r.reads()
    v = check([r.events], (plus(rc, ReadRecord(0, 3, "a2/t2")), ru))
    # in[0]@2 was aborted in txn 2 and redone in txn 3: seeing both is both anomalies at once.
    assert found(v) == {"aborted_read": 1, "duplicate": 1}


def test_part_of_a_committed_transaction_missing_is_a_torn_transaction_and_its_lost_write():
    r = clean_run()
    rc, ru = r.reads()
    v = check([r.events], (without(rc, 1, 0), ru))  # one of txn 1's three records
    # The missing part of a committed transaction is, record by record, a lost write (Jepsen's
    # lost-write); torn counts the transaction: the two always come together.
    assert found(v) == {"torn_transaction": 1, "lost_write": 1}
    assert "returned 2 of its 3 records; not out[1]@0 'a1/t1'" in v.cases["torn_transaction"].examples[0]


def test_two_values_at_one_offset_is_inconsistent_offsets():
    r = clean_run()
    rc, ru = r.reads()
    changed = dataclasses.replace(
        ru,
        records=tuple(
            dataclasses.replace(x, value="zz") if (x.partition, x.offset) == (0, 1) else x for x in ru.records
        ),
    )
    v = check([r.events], (rc, changed))
    assert found(v) == {"inconsistent_offsets": 1}
    assert v.cases["inconsistent_offsets"].examples[0].startswith("out[0]@1 holds 2 values")


def test_a_poll_that_goes_back_without_an_abort_is_a_nonmonotonic_poll():
    r = clean_run()
    i = next(i for i, e in enumerate(r.events) if isinstance(e, Committed))
    events = [*r.events[:i], Polled(P, 1000.045, Position(IN, 0, 1), "a1"), *r.events[i:]]
    v = check([events], r.reads())
    assert found(v) == {"nonmonotonic_poll": 1}
    assert "eos-1 polled in[0]@1 after in[0]@1" in v.cases["nonmonotonic_poll"].examples[0]


def test_a_rewind_past_the_committed_offset_after_an_abort_is_a_nonmonotonic_poll():
    r = clean_run()
    i = next(i for i, e in enumerate(r.events) if isinstance(e, Aborted))
    events = [*r.events[: i + 1], Polled(P, 1000.105, Position(IN, 0, 1), "a1"), *r.events[i + 1 :]]
    v = check([events], r.reads())
    assert found(v) == {"nonmonotonic_poll": 1}
    assert "after the rewind after aborting txn 2 to its committed offset 2" in v.cases["nonmonotonic_poll"].examples[0]


def test_an_input_nobody_processed_is_a_missing_output():
    r = clean_run()
    v = check([r.events], r.reads(), inputs=inputs_read({(1, 2): "b2"}))
    assert found(v) == {"missing_output": 1}
    assert v.cases["missing_output"].examples[0] == "input in[1]@2 'b2': no output in out"


# --- small hand-made histories, each with its count ----------------------------------------------


def test_lost_writes_are_counted_one_per_record():
    r = Run()
    for o in range(3):
        r.poll(0, o, f"x{o}")
        r.send(None, 0, (0, 0), value=f"y{o}")  # at-least-once: acknowledged is committed
    rc, ru = r.reads()
    rc = dataclasses.replace(rc, records=rc.records[:1])
    assert found(check([r.events], (rc, ru))) == {"lost_write": 2}


def test_the_at_least_once_twin_restarted_after_a_crash_duplicates_what_it_redoes():
    first, second = Run(process="alos-1"), Run(process="alos-2")
    for o in range(3):  # sent and acknowledged; killed before committing the input offsets
        first.poll(0, o)
        first.send(None, 0, (0, o))
    second.ends = dict(first.ends)
    second.log = dict(first.log)
    for o in range(4):  # the restart resumes from the last committed offset: 0
        second.poll(0, o)
        second.send(None, 0, (0, o))
    second.commit(None, p0=4)
    v = check([first.events, second.events], second.reads())
    assert found(v) == {"duplicate": 3}


def test_a_verdict_says_in_one_sentence_whether_this_run_showed_an_anomaly():
    """A lesson that opens on a failure prints this sentence: it must hold on a run that did not show it."""
    first, second = Run(process="alos-1"), Run(process="alos-2")
    for o in range(2):
        first.poll(0, o)
        first.send(None, 0, (0, o))
    second.ends, second.log = dict(first.ends), dict(first.log)
    for o in range(3):
        second.poll(0, o)
        second.send(None, 0, (0, o))
    second.commit(None, p0=3)
    duplicated = check([first.events, second.events], second.reads())
    said = duplicated.sentence("duplicate")
    assert said.startswith("This run showed it: 2 duplicates") and "For example: " in said, said
    assert duplicated.sentence(":duplicate") == said  # Jepsen's name works too
    one = dataclasses.replace(
        duplicated, cases={**duplicated.cases, "duplicate": dataclasses.replace(duplicated.cases["duplicate"], count=1)}
    )
    assert one.sentence("duplicate").startswith("This run showed it: 1 duplicate, ")
    r = clean_run()
    clean = check([r.events], r.reads())
    assert clean.sentence("duplicate") == "This run showed no duplicate: the checker found none."
    with pytest.raises(HistoryFormatError, match="missing_output was not checked"):
        clean.sentence("missing_output")


def test_the_exactly_once_processor_killed_mid_transaction_and_restarted_is_clean_and_its_leak_is_flagged():
    first, second = Run(process="eos-1"), Run(process="eos-2")
    for o in range(2):  # txn 1 sent and acknowledged, then SIGKILL: no outcome in the history
        first.poll(0, o)
        first.send(1, 0, (0, o))
    second.ends, second.log = {0: first.ends[0] + 1, 1: 0}, dict(first.log)  # the coordinator aborted it: a marker
    second.log = {k: (v, "a") for k, (v, _) in second.log.items()}
    for o in range(2):
        second.poll(0, o)
        second.send(1, 0, (0, o))
    second.commit(1, p0=2)
    rc, ru = second.reads()
    assert found(check([first.events, second.events], (rc, ru))) == {}
    # Had read_committed returned the killed transaction's records as well, each input is there twice.
    leak = plus(plus(rc, ReadRecord(0, 0, "a0/t1")), ReadRecord(0, 1, "a1/t1"))
    leaked = check([first.events, second.events], (leak, ru))
    assert found(leaked) == {"duplicate": 2}


def test_aborted_reads_are_counted_one_per_record_read():
    r = Run()
    for o in range(3):
        r.poll(0, o)
    for o in range(3):
        r.send(1, o % 2, (0, o))
    r.abort(1, "test")
    rc, ru = r.reads()
    leaky = dataclasses.replace(ru, isolation="read_committed")  # a reader that ignored its isolation level
    v = check([r.events], (leaky, ru))
    assert found(v) == {"aborted_read": 3}
    assert v.cases["aborted_read"].examples[0].endswith("which aborted (test)")


def test_torn_transactions_are_counted_one_per_transaction():
    r = Run()
    for txn in (1, 2):
        for o in range(3):
            r.send(txn, o % 2, (0, 0), value=f"t{txn}-{o}")
        r.commit(txn)
    rc, ru = r.reads()
    torn = dataclasses.replace(rc, records=tuple(x for x in rc.records if x.value not in ("t1-1", "t2-0")))
    v = check([r.events], (torn, ru))
    assert v.count("torn_transaction") == 2 and v.count("lost_write") == 2


def test_inconsistent_offsets_are_counted_one_per_offset():
    r = Run()
    r.send(None, 0, (0, 0), value="v0")
    r.send(None, 0, (0, 1), value="v1")
    rc, ru = r.reads()
    polls = [Polled("reader", 2000.0, Position(OUT, 0, o), f"other{o}") for o in (0, 1)]
    assert found(check([r.events, polls], (rc, ru))) == {"inconsistent_offsets": 2}


def test_unseen_values_are_counted_one_per_record():
    r = Run()
    for o in range(4):
        r.send(None, 1, (0, 0), value=f"u{o}")
    rc, ru = r.reads()
    early = FinalRead(OUT, "read_committed", rc.records[:1], {1: 1})
    assert found(check([r.events], (early, ru))) == {"unseen": 3}


def test_nonmonotonic_polls_are_counted_per_backward_step_and_reset_by_an_assignment():
    r = Run()
    for o in (0, 1, 2, 1, 2, 0):
        r.poll(0, o)
    assert found(check([r.events], r.reads())) == {"nonmonotonic_poll": 2}
    r2 = Run()
    for o in (0, 1, 2):
        r2.poll(0, o)
    r2.events.append(Assigned(P, 2000.0, ((IN, 0),)))  # a rebalance: it starts again from the committed offset
    r2.poll(0, 0)
    assert found(check([r2.events], r2.reads())) == {}


def test_check_needs_a_read_committed_read_of_one_topic():
    r = clean_run()
    rc, ru = r.reads()
    with pytest.raises(HistoryFormatError, match="read_committed"):
        check([r.events], [ru])
    with pytest.raises(HistoryFormatError, match="different topics"):
        check([r.events], [rc, dataclasses.replace(ru, topic="other")])


def test_an_assignment_with_committed_offsets_bounds_the_rewind_of_the_first_abort():
    r = Run()
    r.events.append(Assigned(P, r._t(), ((IN, 0),), (Position(IN, 0, 2),)))  # the group had committed 2
    r.poll(0, 2)
    r.poll(0, 3)
    r.send(1, 0, (0, 2))
    r.abort(1)
    r.poll(0, 2)  # back to the committed offset: what an abort asks for
    assert found(check([r.events], r.reads())) == {}
    r.abort(1)
    r.poll(0, 1)  # further back than the group ever committed
    assert found(check([r.events], r.reads())) == {"nonmonotonic_poll": 1}
