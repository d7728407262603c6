"""Lab 02's checks, cut into pieces (issue 22), each on what it decides, without a cluster: task 3's hint, and the
blocks task 2 draws its edges from."""

from __future__ import annotations

import random

import pytest

from eoslab import inspect as ins
from eoslab.m02_pid_ranges import lab as lab02

# -- lab 02 task 3: the hint names the moments missed, and a block of another broker ------------------


def _block(broker: int, nxt: int) -> ins.ProducerIdBlock:
    return ins.ProducerIdBlock(broker, 1, nxt, 0, 0, "log", "")


def test_the_predict_hint_says_blocks_are_per_broker_when_the_answer_was_anothers_block() -> None:
    blocks = [_block(2, 2000), _block(3, 3000), _block(2, 4000)]
    own: list[lab02._PredictCase] = [("past 90 %", 1950, (3000, 4000), 1951), ("in the next block", 3000, (0, 1), 3001)]
    hint = lab02._predict_hint(own, blocks)
    assert hint.startswith("past 90 % the next block is already granted") and "block just started" in hint
    assert not hint.startswith("blocks are per broker")
    others: list[lab02._PredictCase] = [("the last id of its block", 1999, (2000, 3000), 3000)]
    assert lab02._predict_hint(others, blocks).startswith("blocks are per broker: the newest block overall")


def _inclusive_end_first_match(pid: int, blocks: list[ins.ProducerIdBlock]) -> int | None:
    owners = [b.broker_id for b in blocks if b.first_producer_id <= pid <= b.next_producer_id]
    return owners[0] if owners else None


@pytest.mark.parametrize("seed", range(200))
def test_task_2_always_asks_a_handover_edge_so_an_inclusive_end_fails_whatever_is_drawn(seed: int) -> None:
    """Run 43's intermittent failure: drawn from all blocks alike, four blocks that each followed a block of their
    own broker let an inclusive end that keeps the first match pass. Many runs of one broker, one handover."""
    blocks = (
        [_block(1, n) for n in range(1000, 9000, 1000)] + [_block(2, 9000)] + [_block(2, n) for n in (10000, 11000)]
    )
    drawn = lab02.edge_blocks(blocks, random.Random(seed))
    assert len(drawn) == 4 and len({b.next_producer_id for b in drawn}) == 4 and _block(2, 9000) in drawn
    asked = [edge for b in drawn for edge in (b.first_producer_id, b.last_producer_id)]
    assert any(_inclusive_end_first_match(pid, blocks) != ins.block_of(pid, blocks).broker_id for pid in asked)  # type: ignore[union-attr]


def test_task_2_draws_what_there_is_when_blocks_are_few() -> None:
    assert lab02.edge_blocks([_block(3, 1000)], random.Random(0)) == [_block(3, 1000)]
    two = [_block(1, 1000), _block(3, 2000), _block(3, 2000)]  # the snapshot repeats the newest grant
    assert sorted(b.next_producer_id for b in lab02.edge_blocks(two, random.Random(0))) == [1000, 2000]
