"""Checks of lab 02 (producer-id ranges): judged against the real metadata log and real grants.

Each check stands alone: it asks the brokers for fresh producer ids with the
kit's own InitProducerId requests (through the fault proxy) and compares the
learner's functions with what the controllers recorded.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

from eoslab import inspect as ins
from eoslab.cluster import Cluster
from eoslab.labcheck import Verdict, guarded, verdict
from eoslab.m02_pid_ranges.lesson import (
    PidClient,
    allocations,
    ask_for_next_block,
    position,
    restart_broker,
    wait_for_grant,
    wait_for_grants,
)

EDGES = (0, 1, 999, 1000, 1999, 2000, 123456)


def _block_problem(pid: int, got: Any) -> str:
    """What is wrong with ``got`` as the block of ``pid``, in words: the edges are the same at every run,
    so the right block is not shown."""
    if len(got) != 2 or not all(isinstance(x, int) for x in got):
        return "not a (first, end) pair of ints"
    first, end = got
    if not first <= pid < end:
        return f"{pid} is not in [{first}, {end})"
    if end - first != 1000:
        return f"it holds {end - first} ids"
    return "it does not start where a block starts"


@guarded("t1")
def check_block_of(block_of: Callable[[int], Any]) -> Verdict:
    """Task 1: ``block_of(pid)`` is the [first, end) range of 1000 that holds ``pid``: at the edges of
    blocks, and at ids drawn at run time (a table of the edges cannot pass)."""
    wrong = []
    for pid in [*EDGES, *random.sample(range(2000, 2**40), 3)]:
        want = (pid // 1000 * 1000, pid // 1000 * 1000 + 1000)
        got = tuple(block_of(pid))
        if got != want:
            wrong.append(f"block_of({pid}) = {got}: {_block_problem(pid, got)}")
    return verdict(
        "t1",
        not wrong,
        ok="every id lands in its block of 1000.",
        saw="; ".join(wrong[:3]),
        hint="blocks are [k*1000, (k+1)*1000): the end is exclusive, like NextProducerId.",
    )


def edge_blocks(blocks: list[ins.ProducerIdBlock], rng: random.Random, n: int = 4) -> list[ins.ProducerIdBlock]:
    """Up to ``n`` distinct blocks whose edges task 2 asks about, drawn at run time: first up to two *handovers*
    (a block whose first id is the end of a block granted to another broker: there an inclusive end names the
    wrong broker whichever match it keeps), then any others. Drawn from all blocks alike, an answer with an
    inclusive end that keeps the first match passed whenever every drawn block followed one of its own broker."""
    unique = list({b.next_producer_id: b for b in blocks}.values())
    ends = {b.next_producer_id: b for b in unique}
    handovers = [b for b in unique if (a := ends.get(b.first_producer_id)) is not None and a.broker_id != b.broker_id]
    drawn = rng.sample(handovers, min(2, len(handovers)))
    rest = [b for b in unique if b not in drawn]
    return drawn + rng.sample(rest, min(n - len(drawn), len(rest)))


@guarded("t2", points=2)
def check_owner_of(cluster: Cluster, owner_of: Callable[[int, list[ins.ProducerIdBlock]], Any]) -> Verdict:
    """Task 2: ``owner_of(pid, blocks)`` names the broker that was granted the block holding ``pid``.

    Asked for fresh ids from every broker, and for the first and last id of granted blocks drawn
    at run time (:func:`edge_blocks`: the edges of ``[first, next)`` catch an inclusive end or an exclusive start).
    """
    rng = random.Random()
    with PidClient(cluster, client_id=f"lab02-t2-{uuid.uuid4().hex[:6]}") as pc:
        grants = [pc.init(b) for b in (1, 2, 3) for _ in range(2)]
    blocks = sorted(ins.producer_id_blocks(cluster), key=lambda b: b.first_producer_id)  # the order of the grants
    questions = [(g.producer_id, g.broker, f"broker {g.broker} granted it just now") for g in grants]
    for b in edge_blocks(blocks, rng):
        questions += [
            (b.first_producer_id, b.broker_id, f"the first id of broker {b.broker_id}'s block"),
            (b.last_producer_id, b.broker_id, f"the last id of broker {b.broker_id}'s block"),
        ]
    wrong = []
    for pid, broker, why in questions:
        got = owner_of(pid, list(blocks))
        if got != broker:
            wrong.append(f"owner_of({pid}) = {got!r}, but it is {why}")
    return verdict(
        "t2",
        not wrong,
        ok=f"you named the granting broker of {len(questions)} ids, fresh ones and the edges of blocks.",
        saw="; ".join(wrong[:3]),
        hint="a ProducerIdBlock has broker_id and the range [first_producer_id, next_producer_id): the first "
        "id is in, next_producer_id is not; the newest block that contains the id is the one that counts.",
        points=2,
    )


_PredictCase = tuple[str, int, tuple[int, int], int]
"""(when, broker 2's last id then, the learner's block [first, end), the id broker 2 handed out next)."""

_PREDICT_WHY = {
    "past 90 %": "past 90 % the next block is already granted (the prefetch), but the broker hands out "
    "ids from its current block until it is used up",
    "the last id of its block": "after the last id of a block the next comes from the next block granted "
    "to THAT broker, which need not follow the old one (other brokers were granted blocks in between)",
    "in the next block": "the block just started is the current one",
}
"""Task 3's hint for each moment the learner's prediction missed."""


def _predict_three_times(
    cluster: Cluster, predict_block: Callable[[list[ins.ProducerIdBlock], int, int], Any], rng: random.Random
) -> tuple[list[ins.ProducerIdBlock], ins.ProducerIdBlock, list[_PredictCase]]:
    """Arrange task 3's grants, then ask ``predict_block`` at each moment and let broker 2 answer."""
    first_other, newest = rng.sample([1, 3], 2)
    with PidClient(cluster, client_id=f"lab02-t3-{uuid.uuid4().hex[:6]}") as pc:
        blocks = list(ins.producer_id_blocks(cluster))
        pos = position(cluster, pc, 2, blocks)
        if pos.prefetched is not None:  # broker 2 starts a block it has not prefetched after
            pc.burn(2, pos.block.last_producer_id - pos.last_id)
        # Three AllocateProducerIds, in this order (each a burst of ids after the one before):
        # another broker's, so broker 2's next block will not follow its current one;
        asked = {first_other: ask_for_next_block(cluster, pc, first_other, blocks)}
        # broker 2's, at 90 %: its next block is recorded, yet its ids still come from the current one;
        asked[2] = ask_for_next_block(cluster, pc, 2, blocks)
        last = pc.burn(2, rng.randint(1, 60))[-1].producer_id
        # a third broker's, so the newest grant overall is not broker 2's.
        asked[newest] = ask_for_next_block(cluster, pc, newest, blocks)
        blocks = wait_for_grants(cluster, asked)  # one read of the metadata log for the three
        prefetched = [b for b in blocks if b.broker_id == 2][-1]
        old = ins.block_of(last, [b for b in blocks if b.broker_id == 2])
        assert old is not None
        cases = []
        for name in ("past 90 %", "the last id of its block", "in the next block"):
            if name == "the last id of its block":
                last = pc.burn(2, old.last_producer_id - last)[-1].producer_id
            first, end = tuple(predict_block(list(blocks), 2, last))
            nxt = pc.init(2).producer_id
            cases.append((name, last, (first, end), nxt))
            last = nxt
    return blocks, prefetched, cases


def _predict_hint(wrong: list[_PredictCase], blocks: list[ins.ProducerIdBlock]) -> str:
    hint = "; ".join(_PREDICT_WHY[c[0]] for c in wrong[:2])
    if any((b := ins.block_of(c[2][0], blocks)) is not None and b.broker_id != 2 for c in wrong):
        hint = "blocks are per broker: the newest block overall may belong to another broker; " + hint
    return hint


@guarded("t3", points=2)
def check_predict_block(
    cluster: Cluster, predict_block: Callable[[list[ins.ProducerIdBlock], int, int], Any]
) -> Verdict:
    """Task 3: ``predict_block(blocks, 2, last_id)``, the block broker 2's NEXT id comes from.

    Asked three times against real grants, after the check arranged them: another broker was
    granted a block, broker 2 passed its 90 % mark (its next block is recorded, not in use yet), a
    third broker became the newest grantee; then at broker 2's last id of the block, and in the
    block after. Each prediction is compared with the id broker 2 then hands out.
    """
    blocks, prefetched, cases = _predict_three_times(cluster, predict_block, random.Random())
    wrong = [c for c in cases if not c[2][0] <= c[3] < c[2][1]]
    hint = _predict_hint(wrong, blocks)
    return verdict(
        "t3",
        not wrong,
        ok="broker 2 answered inside your block each time: past its 90 % mark, at the end of a block, and after.",
        saw="; ".join(
            f"{n} (last id {last}): you said [{f}, {e}), broker 2 answered {nxt}" for n, last, (f, e), nxt in wrong
        ),
        expected=f"ids inside broker 2's current block (its prefetched block is [{prefetched.first_producer_id}, "
        f"{prefetched.next_producer_id}))",
        hint=hint + ".",
        points=2,
    )


@guarded("t4", points=2)
def check_allocations(cluster: Cluster, predicted: Any) -> Verdict:
    """Task 4: AllocateProducerIds caused by 2000 ids through a freshly restarted broker 3."""
    before = allocations(cluster, 3)
    restart_broker(cluster, 3)
    with PidClient(cluster, client_id="lab02-t4") as pc:
        last = pc.burn(3, 2000)[-1].producer_id
    # The last id is past 90 % of broker 3's second block: wait for that prefetch's record, which the
    # controller appends asynchronously, before counting.
    block = ins.block_of(last, [b for b in ins.producer_id_blocks(cluster) if b.broker_id == 3])
    assert block is not None
    wait_for_grant(cluster, 3, block)
    actual = allocations(cluster, 3) - before
    return verdict(  # the scenario is the same at every run: a failure does not say the count
        "t4",
        predicted == actual,
        ok=f"{actual} AllocateProducerIds, as you predicted.",
        saw=f"you predicted {predicted!r}, which is not the count the metadata log shows",
        expected="the number of ProducerIdsRecords the restart and the ids added to the metadata log",
        hint="a restarted broker has no block; and a broker asks for its next block before the "
        "current one runs out (at 90 %).",
        points=2,
    )
