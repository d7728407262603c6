"""What lab 03's checks set up on the cluster: keys with a chosen hash, transactions in a pattern, scenarios.

Kept apart from :mod:`eoslab.m03_transactions.lab` (the verdicts) so each stays small.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from eoslab import inspect as ins
from eoslab._wait import wait_until
from eoslab.cluster import Cluster
from eoslab.m03_transactions import lesson as txn

INT_MIN = -(2**31)
SAFE_FIRST = 48  # '0': the appended characters are '0'..'N' (31 consecutive code points)


def string_with_hash(prefix: str, target: int, length: int = 7) -> str:
    """``prefix`` plus ``length`` characters such that Java's ``String.hashCode`` of the whole is ``target``.

    ``hashCode`` is ``sum(c_i * 31^(n-1-i))`` modulo 2^32, so the suffix is ``target``'s
    remainder written in base 31 with digits offset to printable characters; 7 digits
    cover 2^32 (31^7 > 2^32). Why: a check needs fresh keys that hash to
    ``Integer.MIN_VALUE`` at every run, not one famous constant.
    """
    mod = 1 << 32
    need = (target - ins.java_string_hash(prefix) * pow(31, length, mod)) % mod
    need = (need - SAFE_FIRST * sum(pow(31, j, mod) for j in range(length))) % mod
    digits = []
    for _ in range(length):
        need, d = divmod(need, 31)
        digits.append(d)
    out = prefix + "".join(chr(SAFE_FIRST + d) for d in reversed(digits))
    assert ins.java_string_hash(out) == (target if target < 2**31 else target - mod)
    return out


def separate_partitions_0_and_48(cluster: Cluster) -> None:
    """Make partition 0 and 48 of both internal topics have different leaders.

    A key hashing to ``Integer.MIN_VALUE`` lives in partition 0; Python's ``abs()``
    sends it to 48. On a fresh cluster both often have the same leader, and a
    wrong answer would pass by luck.
    """
    for topic in ("__transaction_state", "__consumer_offsets"):
        p0, p48 = cluster.partition(topic, 0), cluster.partition(topic, 48)
        if p0.leader == p48.leader:
            other = next(b for b in p48.replicas if b != p0.leader)
            txn.make_leader(cluster, topic, 48, other)


WRONG_SIGN_RULES: dict[str, Callable[[int], int]] = {
    "Utils.toPositive (h & 0x7fffffff)": lambda h: (h & 0x7FFFFFFF) % 50,
    "Python's modulo without abs": lambda h: h % 50,
}
"""Java's hash with the sign handled wrongly: each differs from ``Utils.abs(h) % 50`` only when ``h < 0``."""


def negative_key(prefix: str, leaders: dict[int, int], rng: random.Random) -> str | None:
    """``prefix`` plus characters making a key whose (negative) Java hash puts every rule of
    :data:`WRONG_SIGN_RULES` on a partition led by ANOTHER broker than the right partition's leader.

    Random keys have a negative hash half the time, and the wrong partition shares the right one's leader a
    third of the time: a sign mistake slipped through about one run in 130 (more with leadership skewed).
    None when no hash can tell (every partition led by one broker)."""
    for _ in range(500):
        h = rng.randint(INT_MIN + 1, -1)
        right = leaders.get(abs(h) % 50)
        if all(leaders.get(rule(h)) != right for rule in WRONG_SIGN_RULES.values()):
            return string_with_hash(prefix, h)
    return None


KEYS_PER_KIND = 6
"""Task 1's ordinary keys per kind (transactional ids, group ids), beside the two hashing to Integer.MIN_VALUE."""
INTERNAL = {"transaction": "__transaction_state", "group": "__consumer_offsets"}


def coordinator_keys(run: str, table: dict[str, dict[int, int]]) -> tuple[list[tuple[str, str]], set[str]]:
    """Task 1's keys: six fresh ones of each kind, one of each kind hashing to Integer.MIN_VALUE, one of each kind
    with a negative hash that every sign mistake (:data:`WRONG_SIGN_RULES`) sends to another broker."""
    # Six keys of each kind: a guess that is right one time in three (three brokers lead the partitions)
    # passes every one of them once in 3**12 tries. With five (as before), a Python-hash answer was right on
    # all of them about once in 250 runs, and then got the Integer.MIN_VALUE hint meant for abs() (seen in CI).
    keys = [(f"lab03-app-{run}-{i}", "transaction") for i in range(KEYS_PER_KIND)] + [
        (f"lab03-grp-{run}-{i}", "group") for i in range(KEYS_PER_KIND)
    ]
    minimal = {
        string_with_hash(f"lab03-min-{run}-", INT_MIN),
        string_with_hash(f"lab03-g-{run}-", INT_MIN),
    }
    keys += [(k, kind) for k, kind in zip(sorted(minimal), ("transaction", "group"), strict=True)]
    rng = random.Random()
    for prefix, kind in ((f"lab03-neg-{run}-", "transaction"), (f"lab03-gneg-{run}-", "group")):
        key = negative_key(prefix, table[INTERNAL[kind]], rng)
        keys += [(key, kind)] if key is not None else []
    random.shuffle(keys)
    return keys, minimal


def producer(cluster: Cluster, tid: str, client: str, **conf: Any) -> txn.TxnProducer:
    """A transactional producer for a check, through the proxy (so rules can hit it)."""
    return txn.transactional_producer(cluster, tid, client, conf=conf or None)


def write_pattern(cluster: Cluster, topic: str, run: str, pattern: list[bool]) -> tuple[list[str], list[str]]:
    """One transaction per entry (True = commit, False = abort), each with one value.

    Committed values alternate between the two partitions (from a random one), so both
    hold some; aborted ones go to a random partition, flushed first, so their data is
    on disk. Returns (committed, aborted) values.
    """
    p = producer(cluster, f"lab03-t3-{run}", f"lab03-t3-{run}")
    p.init_transactions(30)
    committed: list[str] = []
    aborted: list[str] = []
    first = random.randint(0, 1)
    for i, commit in enumerate(pattern):
        value = f"{'kept' if commit else 'dropped'}-{run}-{i}"
        part = (first + len(committed)) % 2 if commit else random.randint(0, 1)
        p.begin_transaction()
        p.produce(topic, value.encode(), partition=part)
        p.flush(30)
        (p.commit_transaction if commit else p.abort_transaction)(30)
        (committed if commit else aborted).append(value)
    txn.wait_settled(cluster, [p.transactional_id])
    return committed, aborted


class Batches:
    """The work a zombie-handler task gets: batches of values; the check fences the worker before batch ``k``.

    Iterating yields batch after batch; just before yielding batch ``k`` it runs ``fence``
    (a successor initialises with the same transactional id). ``pulled_after_fence``
    counts the batches the worker asked for AFTER the fenced one: a worker that stops
    at the fatal error asks for none.
    """

    def __init__(self, run: str, k: int, total: int, fence: Callable[[], None]) -> None:
        self.batches = [[f"b{i}-{j}-{run}" for j in range(random.randint(1, 3))] for i in range(total)]
        self.k, self.fence = k, fence
        self.given = 0

    def __iter__(self) -> Any:
        for i, batch in enumerate(self.batches):
            if i == self.k:
                self.fence()
            self.given = i + 1
            yield list(batch)

    @property
    def pulled_after_fence(self) -> int:
        return max(0, self.given - self.k - 1)

    def values(self, upto: int) -> list[str]:
        return [v for b in self.batches[:upto] for v in b]


# -- task 6: scenarios of one transactional id, and what the coordinator logged ---------------

STEPS = ("init", "begin", "send A", "send B", "offsets", "commit", "abort", "timeout")
TIMEOUT_MS = 2000  # a scenario's transaction timeout: the coordinator's scan runs every second here


def scenarios(rng: random.Random) -> list[list[str]]:
    """Four scenarios whose SHAPES are fixed and whose labels are drawn, so every rule is asked in every run.

    plain: a commit and an abort (drawn order), the second transaction sending twice to one partition; fence: a
    new instance over an Ongoing transaction, then its own transaction; empty: a transaction with no send ended,
    then one with consumer offsets; timeout: a transaction the coordinator aborts itself. A wrong rule about any
    of these (an empty end writing records, offsets enrolling nothing, a record per send, a silent timeout, ...)
    fails every run rather than the runs that happened to draw its case (tests/unit/m03/test_lab03_decoys.py)."""
    end1, end2 = rng.sample(["commit", "abort"], 2)
    first, second = rng.sample(["send A", "send B"], 2)
    again = rng.choice(["send A", "send B"])
    plain = ["init", "begin", first, second, end1, "begin", again, again, end2]
    fence = ["init", "begin", first, "init", "begin", second, rng.choice(["commit", "abort"])]
    empty = ["init", "begin", rng.choice(["commit", "abort"]), "init", "begin", first, "offsets"]
    empty.append(rng.choice(["commit", "abort"]))
    timeout = ["init", "init", "begin", second, "timeout"]
    return [plain, fence, empty, timeout]


def run_scenario(cluster: Cluster, steps: list[str], tid: str, topic: str, group: Any) -> None:
    """Drive one transactional id through ``steps`` with librdkafka producers (each "init" = a new instance)."""
    from confluent_kafka import TopicPartition

    cur: txn.TxnProducer | None = None
    for n, step in enumerate(steps):
        if step == "init":
            conf = {"transaction.timeout.ms": TIMEOUT_MS, "message.timeout.ms": TIMEOUT_MS, "socket.timeout.ms": 1500}
            cur = producer(cluster, tid, f"{tid}-i{n}", **(conf if "timeout" in steps else {}))
            cur.init_transactions(60)
            continue
        assert cur is not None, "a scenario starts with init"
        if step == "begin":
            cur.begin_transaction()
        elif step in ("send A", "send B"):
            cur.produce(topic, f"{tid} {step}".encode(), partition=0 if step == "send A" else 1)
            cur.flush(30)
        elif step == "offsets":
            cur.send_offsets_to_transaction([TopicPartition(topic, 0, 1)], group.consumer_group_metadata(), 30)
        elif step in ("commit", "abort"):
            (cur.commit_transaction if step == "commit" else cur.abort_transaction)(30)
        elif step == "timeout":
            wait_until(
                lambda: txn.coordinator_state(cluster, tid) == "CompleteAbort",
                timeout=30,
                interval=0.1,
                what=f"the coordinator to abort {tid!r} on its {TIMEOUT_MS} ms timeout",
            )
    time.sleep(0)  # (keep the last instance referenced until here)


def logged_states(cluster: Cluster, tids: list[str]) -> dict[str, list[tuple[str, int]]]:
    """(state, epoch relative to the first record) per id, from ``__transaction_state`` on disk."""
    txn.wait_settled(cluster, tids)
    out = {}
    for tid, hist in ins.transaction_histories(cluster, tids).items():
        base = hist[0].producer_epoch if hist and hist[0].producer_epoch is not None else 0
        out[tid] = [(h.state, int(h.producer_epoch or 0) - int(base or 0)) for h in hist]
    return out
