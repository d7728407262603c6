"""Lab 04's scenarios: logs written at run time from random patterns, and the truth about them.

One shared scenario serves tasks 1, 2 and 4 (they only read it): a topic of three partitions,
each written from its own random pattern — P0 with one open transaction and records after
its start, P1 with TWO open transactions, P2 with none — plus a consumer group that read
some of it. It is written once per process and reused for ``REUSE_S`` seconds (its open
transactions time out after 5 min), so a learner who re-runs a check meets the same log and
a new kernel meets a new one. Task 3 mutates its log (it aborts a transaction): it gets a
fresh one every time.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eoslab import inspect as ins
from eoslab.demos import read_committed as rc
from eoslab.demos import read_values, run_id
from eoslab.errors import GradingError

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

REUSE_S = 180.0  # well inside the open transactions' 300 s timeout (rc.LOG_PRODUCER)
PARTITIONS = 3


@dataclass
class Scenario:
    topic: str
    logs: dict[int, rc.WrittenLog]
    batches: dict[int, list[ins.Batch]]
    offsets: dict[int, ins.PartitionOffsets]
    returned: dict[tuple[int, str], list[int]]  # (partition, isolation) -> offsets a real consumer returned
    group: str = ""
    committed: dict[int, int] = field(default_factory=dict)
    made: float = 0.0


_CACHE: dict[str, Scenario] = {}


def _patterns(rng: random.Random) -> dict[int, list[rc.Op]]:
    """P0: one open transaction with a committed and a plain record after its start; P1: two open
    transactions; P2: none open (its LSO is its HW), each actor's transactions ending both ways (:func:`two_fates`)."""
    p0 = rc.random_pattern(rng, actors=2, steps=rng.randint(5, 8), open_txns=0)
    p0 += [rc.Op("t3", "send", rng.randint(1, 2)), rc.Op("plain"), rc.Op("t1"), rc.Op("t1", "commit")]
    if rng.random() < 0.5:
        p0 += [rc.Op("t2"), rc.Op("t2", "abort")]
    p1 = rc.random_pattern(rng, actors=3, steps=rng.randint(4, 7), open_txns=0)
    first, second = rng.sample(["t1", "t2", "t3"], 2)
    p1 += [rc.Op(first), rc.Op("plain"), rc.Op(second, "send", 2), rc.Op("plain")]
    p2 = rc.random_pattern(rng, actors=2, steps=rng.randint(5, 8), open_txns=0) + two_fates(rng)
    return {0: p0, 1: p1, 2: p2}


def two_fates(rng: random.Random) -> list[rc.Op]:
    """Each actor commits one transaction and aborts another, in a drawn order (the two in opposite orders).

    A batch's fate is its producer's NEXT marker: a rule that keys the fate by producer alone (its last
    marker, or its first) reads one of these transactions wrong, in every run rather than by chance."""
    ends: list[rc.Action] = ["commit", "abort"]
    first, second = rng.sample(ends, 2)
    a, b = rng.sample(["t1", "t2"], 2)
    return [
        rc.Op(a),
        rc.Op(a, first),
        rc.Op(b),
        rc.Op(b, second),
        rc.Op(a),
        rc.Op(a, second),
        rc.Op(b),
        rc.Op(b, first),
    ]


def read_offsets(cluster: Cluster, topic: str, partition: int, isolation: str) -> list[int]:
    """The offsets a consumer with ``isolation`` returns, reading the partition from 0."""
    return [off for _, off, _ in read_values(cluster, topic, [partition], isolation=isolation)]


def scenario(cluster: Cluster) -> Scenario:
    """The shared scenario of tasks 1, 2 and 4 (written once per process and ``REUSE_S``)."""
    key = cluster.bootstrap_servers()
    found = _CACHE.get(key)
    if found is not None and time.time() - found.made < REUSE_S:
        return found
    if found is not None:
        for log in found.logs.values():
            log.close()
    rng = random.Random()
    run = run_id()
    topic = f"lab04-{run}"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    logs = {p: rc.write_log(cluster, topic, p, pat, run=f"{run}{p}") for p, pat in _patterns(rng).items()}
    dumped = ins.batches_of(cluster, [(topic, p) for p in range(PARTITIONS)])
    offsets = {o.partition: o for o in ins.offsets(cluster, topic, list(range(PARTITIONS)))}
    returned = {
        (p, iso): read_offsets(cluster, topic, p, iso)
        for p in range(PARTITIONS)
        for iso in ("read_uncommitted", "read_committed")
    }
    s = Scenario(topic, logs, {p: dumped[(topic, p)] for p in range(PARTITIONS)}, offsets, returned)
    s.group, s.committed = _group(cluster, s, rng)
    s.made = time.time()
    _CACHE[key] = s
    return s


def _group(cluster: Cluster, s: Scenario, rng: random.Random) -> tuple[str, dict[int, int]]:
    """A group of a read_committed consumer that committed where it stopped: at the LSO of P0 and P1
    (it waits there), somewhere below the end of P2 (it is merely behind)."""
    from confluent_kafka import TopicPartition

    from eoslab.demos import consumer

    group = f"lab04-grp-{run_id()}"
    committed = {0: s.offsets[0].last_stable, 1: s.offsets[1].last_stable}
    committed[2] = rng.randint(1, max(1, s.offsets[2].high_watermark - 1))
    c = consumer(cluster, group)
    try:
        c.commit(offsets=[TopicPartition(s.topic, p, o) for p, o in committed.items()], asynchronous=False)
    finally:
        c.close()
    return group, committed


def open_logs(cluster: Cluster, rng: random.Random) -> rc.WrittenLog:
    """Task 3's partition: 2-3 open transactions among committed/plain records, the one holding the LSO
    (started first) by the producer with the HIGHEST id.

    Describe-producers lists by producer id (:func:`eoslab.inspect.describe_producers`), so "the first open
    transaction listed" and "the lowest producer id" are the same wrong answer, and it is wrong in every run. To
    know the ids before the order, the actors' producers are initialised once first: a transactional id keeps
    its producer id across InitProducerId calls (only the epoch grows), so the log's writers get the same ids."""
    run = run_id()
    topic = f"lab04-t3-{run}"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3]])
    actors = [f"t{i + 1}" for i in range(rng.randint(2, 3))]
    # an end with no open transaction: the producer is initialised, nothing is written
    first = rc.write_log(cluster, topic, 0, [rc.Op(a, "commit") for a in actors], run=run)
    ids = {a: first.producer_id(a) for a in actors}
    first.close()
    holder = max(actors, key=ids.__getitem__)
    rest = [a for a in actors if a != holder]
    rng.shuffle(rest)
    pattern = rc.random_pattern(rng, actors=2, steps=rng.randint(2, 4), open_txns=0)
    pattern = [rc.Op(f"c{op.actor}" if op.actor != rc.PLAIN else op.actor, op.action, op.n) for op in pattern]
    for a in [holder, *rest]:
        pattern += [rc.Op(a, "send", rng.randint(1, 2)), rc.Op("plain", "send", rng.randint(0, 1) or 1)]
    log = rc.write_log(cluster, topic, 0, pattern, run=run)
    if {a: log.producer_id(a) for a in actors} != ids:  # the premise above, checked rather than trusted
        log.close()
        raise GradingError(
            f"a transactional id changed producer id between two InitProducerId calls ({ids}): re-run the check."
        )
    return log
