"""Checks of lab 02 (producer-id ranges): judged against the real metadata log and real grants.

Each check stands alone: it asks the brokers for fresh producer ids with the
kit's own InitProducerId requests (through the fault proxy) and compares the
learner's functions with what the controllers recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from eoslab import inspect as ins
from eoslab.cluster import Cluster
from eoslab.demos.pid_ranges import PidClient, allocations, restart_broker
from eoslab.grading._checks import Verdict, guarded, verdict

EDGES = (0, 1, 999, 1000, 1999, 2000, 123456)


@guarded("t1")
def check_block_of(block_of: Callable[[int], Any]) -> Verdict:
    """Task 1: ``block_of(pid)`` is the [first, end) range of 1000 that holds ``pid``."""
    wrong = []
    for pid in EDGES:
        want = (pid // 1000 * 1000, pid // 1000 * 1000 + 1000)
        got = tuple(block_of(pid))
        if got != want:
            wrong.append(f"block_of({pid}) = {got}, expected {want}")
    return verdict(
        "t1",
        not wrong,
        ok="every id lands in its block of 1000.",
        saw="; ".join(wrong[:3]),
        hint="blocks are [k*1000, (k+1)*1000): the end is exclusive, like NextProducerId.",
    )


@guarded("t2", points=2)
def check_owner_of(cluster: Cluster, owner_of: Callable[[int, list[ins.ProducerIdBlock]], Any]) -> Verdict:
    """Task 2: ``owner_of(pid, blocks)`` names the broker that was granted the block holding ``pid``."""
    with PidClient(cluster, client_id="lab02-t2") as pc:
        grants = [pc.init(b) for b in (1, 2, 3) for _ in range(2)]
    blocks = list(ins.producer_id_blocks(cluster))
    wrong = [
        f"owner_of({g.producer_id}) = {owner_of(g.producer_id, blocks)!r}, but broker {g.broker} granted it"
        for g in grants
        if owner_of(g.producer_id, blocks) != g.broker
    ]
    return verdict(
        "t2",
        not wrong,
        ok="you named the granting broker of every fresh id.",
        saw="; ".join(wrong[:3]),
        hint="a ProducerIdBlock has broker_id and the range [first_producer_id, next_producer_id); "
        "the newest block that contains the id is the one that counts.",
        points=2,
    )


@guarded("t3", points=2)
def check_predict_block(cluster: Cluster, predict_block: Callable[[list[ins.ProducerIdBlock], int], Any]) -> Verdict:
    """Task 3: predict the block broker 2's next producer id comes from, then ask broker 2 for one."""
    with PidClient(cluster, client_id="lab02-t3") as pc:
        pc.init(2)  # make sure broker 2 holds a block now
        blocks = list(ins.producer_id_blocks(cluster))
        predicted = tuple(predict_block(blocks, 2))
        grant = pc.init(2)
    first, end = predicted
    return verdict(
        "t3",
        first <= grant.producer_id < end,
        ok=f"broker 2 answered {grant.producer_id}, inside [{first}, {end}).",
        saw=f"broker 2 answered {grant.producer_id}, outside your [{first}, {end})",
        expected="an id inside broker 2's current block",
        hint="blocks are per broker: find the NEWEST block granted to broker 2, not the newest overall.",
        points=2,
    )


@guarded("t4", points=2)
def check_allocations(cluster: Cluster, predicted: Any) -> Verdict:
    """Task 4: AllocateProducerIds caused by 2000 ids through a freshly restarted broker 3."""
    before = allocations(cluster, 3)
    restart_broker(cluster, 3)
    with PidClient(cluster, client_id="lab02-t4") as pc:
        pc.burn(3, 2000)
    time.sleep(1.0)  # the controller records a grant asynchronously; the last prefetch may trail the ids
    actual = allocations(cluster, 3) - before
    return verdict(
        "t4",
        predicted == actual,
        ok=f"{actual} AllocateProducerIds, as you predicted.",
        saw=f"you predicted {predicted!r}",
        expected=f"{actual} (ProducerIdsRecords in the metadata log)",
        hint="a restarted broker has no block; and a broker asks for its next block before the "
        "current one runs out (at 90 %).",
        points=2,
    )
