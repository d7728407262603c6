"""Pure logic behind lab 01's checks: leader-election cases, and what a wrong duplicate group mixed up.

Kept apart from the checks (which drive the cluster) so it is unit-tested without one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

BROKER_IDS = (1, 2, 3, 4, 5)
"""Election cases use ids beyond the course's three brokers: the rule must not depend on them."""


def elect(replicas: Sequence[int], isr: Sequence[int], killed: int) -> int | None:
    """The KRaft controller's choice when the leader ``killed`` is fenced: the first replica, in the
    ASSIGNED order, that is in the ISR and is not the dead broker (None: no eligible replica)."""
    return next((r for r in replicas if r in isr and r != killed), None)


@dataclass(frozen=True)
class LeaderCase:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    killed: int
    expected: int

    def __str__(self) -> str:
        return f"replicas={list(self.replicas)}, isr={list(self.isr)}, killed={self.killed}"


def _surviving(c: LeaderCase) -> list[int]:
    return [r for r in c.isr if r != c.killed]


def _after_killed(c: LeaderCase) -> list[int]:
    """The replicas after the dead one in the assigned list, wrapping round: a "succession" reading of it."""
    i = c.replicas.index(c.killed)
    return [*c.replicas[i + 1 :], *c.replicas[:i]]


DECOYS: dict[str, Callable[[LeaderCase], Any]] = {
    "the highest surviving id": lambda c: max(_surviving(c)),
    "the lowest surviving id": lambda c: min(_surviving(c)),
    "the second replica": lambda c: c.replicas[1],
    "the next replica, ISR ignored": lambda c: next(r for r in c.replicas if r != c.killed),
    "the first surviving ISR member, in ISR order": lambda c: _surviving(c)[0],
    "the next replica after the dead one, in the ISR": lambda c: next(r for r in _after_killed(c) if r in c.isr),
    "the next replica after the dead one, ISR ignored": lambda c: _after_killed(c)[0],
    **{f"always {b}": (lambda const: lambda c: const)(b) for b in BROKER_IDS},
}
"""Plausible wrong rules: the cases are drawn until every one of them gets at least one case wrong."""


def _case(rng: random.Random) -> LeaderCase:
    replicas = tuple(rng.sample(BROKER_IDS, 3))
    killed = rng.choice(replicas)  # the leader that dies
    others = [r for r in replicas if r != killed]
    isr = [killed, *rng.sample(others, rng.randint(1, 2))]
    rng.shuffle(isr)  # an ISR is a set: its order says nothing
    expected = elect(replicas, isr, killed)
    assert expected is not None
    return LeaderCase(replicas, tuple(isr), killed, expected)


def leader_cases(rng: random.Random, n: int = 6) -> list[LeaderCase]:
    """``n`` election cases, drawn at random until each rule of :data:`DECOYS` fails at least one."""
    while True:
        cases = [_case(rng) for _ in range(n)]
        if all(any(rule(c) != c.expected for c in cases) for rule in DECOYS.values()):
            return cases


# -- duplicates -----------------------------------------------------------------------------------


def _content(b: Any) -> tuple[Any, ...]:
    return tuple((r.key, r.value) for r in b.records)


def _without_ids(ids: set[int], bs: list[Any]) -> str:
    """Batches without a producer id (-1) are one write only if they are all such, with the same records."""
    if len(ids) > 1:
        return "it mixes batches without a producer id (-1) and batches with one: they cannot be the same write"
    if len({_content(b) for b in bs}) > 1:
        return "it joins producer-id -1 batches whose records differ: without an id only the records tell"
    return ""


def _one_producer(bs: list[Any]) -> str:
    """One producer's batches are one write only within one epoch and at one (first, last) sequence."""
    if len({b.producer_epoch for b in bs}) > 1:
        return (
            f"it joins epochs {sorted({b.producer_epoch for b in bs})} of producer {bs[0].producer_id}: after an "
            "epoch bump (KIP-360) the producer starts its sequences again at 0, so (epoch, sequence) together "
            "name a write"
        )
    if len({(b.base_sequence, b.last_sequence) for b in bs}) > 1:
        return "it joins different sequence numbers of one producer: each sequence is a different write"
    return ""


def what_it_mixes(group: frozenset[int], by_offset: dict[int, Any]) -> str:
    """Why a group of batches is NOT one write stored twice, in a sentence (empty if it is)."""
    bs = [by_offset[o] for o in sorted(group) if o in by_offset]
    if len(bs) < len(group):
        return f"offsets {sorted(set(group) - set(by_offset))} are not batches of this log"
    ids = {b.producer_id for b in bs}
    if -1 in ids:
        return _without_ids(ids, bs)
    if len(ids) > 1:
        return (
            f"it joins producer ids {sorted(ids)}: a new producer (a restarted application) gets a NEW id, "
            "so its resend is a new write (that is why idempotence cannot cover an application restart)"
        )
    return _one_producer(bs)
