"""Lab 01's checks, cut into pieces (issue 22), each on what it decides, without a cluster: task 3's election and the
decoys it draws cases against, task 2's judge of a duplicate group, its plan and the writes stored twice."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from eoslab.m01_idempotence import _lab_cases as cases
from eoslab.m01_idempotence import lab as lab01

# -- lab 01 task 3: who leads next ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "isr", "killed", "leader"),
    [
        ([1, 3, 2], [1, 2, 3], 1, 3),  # assigned order, not id order
        ([2, 3, 1], [1, 3, 2], 2, 3),
        ([2, 3, 1], [1, 2], 2, 1),  # 3 is out of the ISR
        ([4, 5, 1], [5, 4], 5, 4),  # the dead leader was not the preferred one
        ([1, 2, 3], [1], 1, None),  # nobody eligible: no leader (unclean election is off)
    ],
)
def test_elect_takes_the_first_assigned_replica_in_the_isr(replicas, isr, killed, leader):
    assert cases.elect(replicas, isr, killed) == leader


@pytest.mark.parametrize("seed", range(20))
def test_every_decoy_rule_loses_on_the_drawn_cases(seed):
    drawn = cases.leader_cases(random.Random(seed))
    assert len(drawn) == 6
    for name, rule in cases.DECOYS.items():
        assert any(rule(c) != c.expected for c in drawn), name
    for c in drawn:
        assert c.killed in c.isr and c.expected == cases.elect(c.replicas, c.isr, c.killed)


# -- lab 01 task 2: what a wrong duplicate group mixed up ------------------------------------------


def _batch(offset, pid, epoch=-1, seq=-1, value="v"):
    return SimpleNamespace(
        base_offset=offset,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        last_sequence=seq,
        records=[SimpleNamespace(key=None, value=value)],
    )


LOG = {
    b.base_offset: b
    for b in [
        _batch(0, -1, value="x"),
        _batch(1, -1, value="x"),  # the retry of offset 0: the one true duplicate
        _batch(2, -1, value="y"),
        _batch(3, 7, 0, 0, "a"),
        _batch(4, 7, 1, 0, "t"),  # after an epoch bump
        _batch(5, 8, 0, 0, "a"),  # a restarted application resends "a"
        _batch(6, 7, 0, 1, "t"),
    ]
}


@pytest.mark.parametrize(
    ("group", "says"),
    [
        ({0, 1}, ""),
        ({0, 2}, "records differ"),
        ({0, 3}, "mixes batches without a producer id"),
        ({3, 5}, "a NEW id"),
        ({3, 4}, "epoch bump"),
        ({3, 6}, "different sequence numbers"),
        ({0, 99}, "not batches of this log"),
    ],
)
def test_a_wrong_group_is_explained(group, says):
    why = cases.what_it_mixes(frozenset(group), LOG)
    assert (says in why) if says else why == ""


# -- lab 01 task 2: the scenario's plan and the duplicates that reached the log ---------------------


@pytest.mark.parametrize("seed", range(40))
def test_the_duplicate_plan_duplicates_at_least_two_writes_and_leaves_one_alone(seed: int) -> None:
    plain, idempotent = lab01._plan(random.Random(seed), "r1")
    copies = [k for _, k in plain]
    assert 3 <= len(plain) <= 5 and set(copies) <= {0, 1, 2}
    assert copies.count(0) >= 1 and sum(1 for k in copies if k) >= 2
    values = [v for v, _ in plain] + list(idempotent)
    assert len(set(values)) == len(values) and all(v.endswith("-r1") for v in values)


def test_only_plain_writes_stored_more_than_once_are_duplicates() -> None:
    def batch(offset: int, pid: int, value: str) -> Any:
        return SimpleNamespace(base_offset=offset, producer_id=pid, records=[SimpleNamespace(value=value)])

    log = [batch(0, -1, "a"), batch(1, -1, "a"), batch(2, -1, "b"), batch(3, 7, "c"), batch(4, 8, "c")]
    log += [batch(5, -1, "d"), batch(6, 7, "d"), batch(7, -1, "d")]
    plan = [("a", 1), ("b", 1), ("d", 2), ("never-sent", 0)]
    assert lab01._stored_twice(log, plan) == {frozenset({0, 1}), frozenset({5, 7})}
