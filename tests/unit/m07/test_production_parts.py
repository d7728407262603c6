"""Module 07's and lab 07's pure parts: a group's offsets on a transactional topic from what the cluster
answered, the programs and their mistakes, the per-learner draw, and the program writer's refusals."""

from __future__ import annotations

import difflib

import pytest

from eoslab.inspect import group_rows
from eoslab.m07_production.lab import CASES, draw
from eoslab.m07_production.lesson import MISTAKES, ProgramError, parse_die_at, program, write_program

# What notebook 07's mistake 3 read on the cluster (Kafka 4.1.2): two committed transactions and an aborted one of
# 3 records each, so offsets 0-2 data, 3 COMMIT, 4-6 data, 7 COMMIT, 8-10 aborted, 11 ABORT; HW = LSO = 12. One
# group committed the last record's offset + 1 (7), the other its position (12); reading from 7 returned nothing.
HW_LSO = {0: (12, 12)}
# Mistake 2: a transaction holding the group's offsets is open (OffsetFetch with RequireStable answered 88), no
# offset committed before it (-1001), 10 records on the partition, all still to read.
NO_OFFSET, UNSTABLE, ENDS, LEFT = {0: -1001}, {0}, {0: (10, 10)}, {0: 10}


def test_lag_in_offsets_counts_markers_and_aborted_records_and_records_left_does_not():
    last = group_rows("g-last", "t", {0: 7}, set(), HW_LSO, {0: 0})[0]
    position = group_rows("g-pos", "t", {0: 12}, set(), HW_LSO, {})[0]
    assert (last.offsets_behind, last.records_left) == (5, 0)  # marker 7, aborted 8-10, marker 11
    assert (position.offsets_behind, position.records_left) == (0, 0)
    assert "offsets_behind" in group_rows("g", "t", {0: 7}, set(), {0: (12, 12)}, {}).to_frame().columns


def test_offsets_pending_in_an_open_transaction_are_shown_pending_and_not_committed():
    row = group_rows("g", "t", NO_OFFSET, UNSTABLE, ENDS, LEFT)[0]
    assert row.pending and row.committed is None
    assert (row.offsets_behind, row.records_left) == (10, 10)


def test_each_mistake_is_one_small_edit_of_the_right_program():
    right = program(None, name="p")
    compile(right, "right", "exec")
    for name in MISTAKES:
        wrong = program(name, name="p")
        compile(wrong, name, "exec")
        changed = [ln for ln in difflib.ndiff(right.splitlines(), wrong.splitlines()) if ln[:2] in ("- ", "+ ")]
        assert 1 <= len(changed) <= 5, (name, changed)
    with pytest.raises(ProgramError):
        program("no_such_mistake")


def test_the_draw_is_three_different_mistakes_seeded_by_the_name():
    assert draw("ada") == draw("ada") == draw(" Ada ")
    draws = {name: tuple(draw(name)) for name in (f"learner-{i}" for i in range(40))}
    assert all(len(set(d)) == CASES and set(d) <= set(MISTAKES) for d in draws.values())
    assert len(set(draws.values())) > 10  # two learners rarely get the same set in the same order
    assert {d[0] for d in draws.values()} == set(MISTAKES)  # every mistake is handed out


NOTEBOOK_LIMIT = 3  # a name of the notebook a program must not use: it runs in another process


def uses_a_notebook_name(bootstrap, src, out, group, instance):
    return NOTEBOOK_LIMIT


def test_a_fault_point_is_one_of_two_and_a_program_must_stand_alone():
    assert parse_die_at("after-offsets:2") == ("after-offsets", 2) and parse_die_at(None) is None
    for bad in ("after-produce:1", "after-commit", "after-commit:x"):
        with pytest.raises(ProgramError):
            parse_die_at(bad)
    with pytest.raises(ProgramError, match="NOTEBOOK_LIMIT"):
        write_program(uses_a_notebook_name, "/tmp")
    with pytest.raises(ProgramError, match="not a function"):
        write_program(print, "/tmp")
