"""Checks of lab 01 (the idempotent producer): each judges behaviour on the live cluster.

Every check makes its own topic and client ids, so it stands alone: a learner
who fails task 2 can still pass task 3, and a check can be run again.
"""

from __future__ import annotations

import functools
import random
import uuid
from collections.abc import Callable
from typing import Any

from eoslab import inspect as ins
from eoslab._heal import heal
from eoslab.cluster import Cluster
from eoslab.faults import Proxy, demo_producer_config
from eoslab.labcheck import CheckFailed, Verdict, guarded, verdict
from eoslab.m01_idempotence import _lab_cases as cases
from eoslab.m01_idempotence import lesson as demo

WORDS = ("apple", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "inlet", "juniper", "kelp", "larch")
"""Record values of the duplicate scenario (each run draws its own, suffixed with the run id)."""


def _topic(cluster: Cluster, name: str, assignment: list[list[int]] | None = None) -> str:
    topic = f"lab01-{name}-{uuid.uuid4().hex[:6]}"
    cluster.admin.create_topic(topic, replica_assignment=assignment or [[1, 2, 3]])
    return topic


@guarded("t1", points=2)
def check_survives_ack_loss(cluster: Cluster, conf: dict[str, Any]) -> Verdict:
    """Task 1: with the learner's settings, a lost acknowledgement must not write a second copy.

    The verdict says what the fault did: an answer that leaves the proxy's path (its own
    ``bootstrap.servers``) or asks for no acknowledgement (``acks=0``) never loses one.
    """
    if not isinstance(conf, dict):
        raise CheckFailed(
            f"conf must be a dict of librdkafka settings, not a {type(conf).__name__}: fix the TODO cell above."
        )
    proxy = Proxy.connect(cluster)
    topic = _topic(cluster, "ackloss")
    cid = f"lab01-t1-{uuid.uuid4().hex[:6]}"
    # The lesson's fast-retry profile with idempotence OFF underneath: the learner's settings decide.
    settings = {
        **demo_producer_config(cluster.bootstrap_servers(proxied=True), cid),
        "enable.idempotence": False,
        **conf,
        "client.id": cid,
    }
    p = ins.ObservedProducer(settings)
    with proxy.drop_response(api="Produce", client_id=cid, close=True):
        delivery = demo.send(p, topic, 0, "exactly once, please")
    sent = proxy.trace(client_id=cid, api="Produce").where(via="client")
    lost = [r for r in sent if str(r["fate"]).startswith("response dropped")]
    on_disk = list(demo.batches(cluster, topic, 0, values=False)["base_offset"])
    cluster.admin.delete_topic(topic)
    copies = f"{len(on_disk)} cop{'y' if len(on_disk) == 1 else 'ies'} on disk at offsets {on_disk}"
    saw, hint = _ack_loss_story(sent, delivery, copies)
    return verdict(
        "t1",
        bool(sent) and bool(lost) and delivery.ok and len(on_disk) == 1,
        ok=f"the ack was lost, the batch was sent {len(sent)} times, and the broker kept one copy.",
        saw=saw,
        expected="one copy on disk, delivered, after a lost acknowledgement",
        hint=hint,
        points=2,
    )


def _ack_loss_story(sent: list[dict[str, Any]], delivery: demo.Delivery, copies: str) -> tuple[str, str]:
    """Task 1's (what the fault did, the hint), from the Produce requests the proxy saw and the delivery."""
    if not sent:
        saw = f"no Produce request of your producer passed the fault proxy, so no acknowledgement was lost ({copies})"
        hint = (
            "leave bootstrap.servers to the check: the fault is injected on the proxy's path, and a producer "
            "that bypasses it proves nothing."
        )
    elif all(r["request"].get("acks") == 0 for r in sent):
        saw = (
            f"your producer sent with acks=0: the broker answers nothing, so there was no acknowledgement to "
            f"lose, and the producer cannot know whether the record arrived ({copies})"
        )
        hint = "ask the broker to acknowledge (acks=all); then, which setting makes its retry harmless?"
    elif not delivery.ok:
        saw = (
            f"the acknowledgement was lost and your producer gave up: delivery failed with {delivery.error} "
            f"although the record is there: {copies}"
        )
        hint = (
            "a producer that does not retry writes at most once and reports written records as lost; let it "
            "retry, and give the broker a way to recognise the retry (an id and sequence numbers)."
        )
    else:
        saw = f"the acknowledgement was lost, the batch was sent {len(sent)} times, and {copies}"
        hint = "which setting gives the producer an id and sequence numbers the broker can check?"
    return saw, hint


def duplicate_scenario(
    cluster: Cluster, rng: random.Random | None = None
) -> tuple[str, list[ins.Batch], set[frozenset[int]]]:
    """A real partition log with known duplicates, and the groups a correct answer returns.

    Interleaved, in an order drawn at run time:

    - a non-idempotent producer writes 3 to 5 different records; the proxy drops the
      acknowledgement of at least two of them (once or twice), so librdkafka's retries store
      them 2 or 3 times (producer id -1, nothing the broker can recognise);
    - idempotent producer A writes two records, loses an ack with a short message timeout
      (the record IS on disk, the client is told ``_MSG_TIMED_OUT``) and bumps its epoch
      (KIP-360), then re-sends that record at epoch 1, sequence 0;
    - idempotent producer B (a restarted application) writes a record and re-sends one of A's.

    Only the first kind is the same write twice; the re-sends are new writes with equal content.
    """
    rng = rng or random.Random()
    proxy = Proxy.connect(cluster)
    topic = _topic(cluster, "dups")
    run = uuid.uuid4().hex[:6]
    a = demo.producer(cluster, f"lab01-t2-a-{run}", **demo.EPOCH_BUMP)
    b = demo.producer(cluster, f"lab01-t2-b-{run}")
    plain = demo.producer(cluster, f"lab01-t2-x-{run}", idempotent=False)

    plain_writes, (a0, a1, timed_out, b0) = _plan(rng, run)

    def write_plain(value: str, copies: int) -> None:
        if copies:
            with proxy.drop_response(api="Produce", client_id=plain.client_id, close=True, times=copies):  # type: ignore[attr-defined]
                demo.send(plain, topic, 0, value)
        else:
            demo.send(plain, topic, 0, value)

    def write_a() -> None:
        demo.send(a, topic, 0, a0)
        demo.send(a, topic, 0, a1)
        demo.bump_epoch(proxy, a, topic, 0, timed_out)  # on disk at epoch 0, reported as failed
        demo.send(a, topic, 0, timed_out)  # the application re-sends it: epoch 1, sequence 0

    def write_b() -> None:
        demo.send(b, topic, 0, b0)
        demo.send(b, topic, 0, a1)  # a restarted application resends A's record

    steps: list[Callable[[], None]] = [functools.partial(write_plain, v, k) for v, k in plain_writes]
    for idempotent in (write_a, write_b):
        steps.insert(rng.randint(0, len(steps)), idempotent)
    for step in steps:
        step()
    log = list(ins.batches(cluster, topic, 0, records=True, data=True))
    return topic, log, _stored_twice(log, plain_writes)


def _plan(rng: random.Random, run: str) -> tuple[list[tuple[str, int]], tuple[str, str, str, str]]:
    """The duplicate scenario's values: the plain producer's writes with their lost acks, then A's and B's four."""
    n = rng.randint(3, 5)
    extra = [rng.choice((1, 2)) for _ in range(n)]  # lost acks -> extra copies
    for i in rng.sample(range(n), rng.randint(1, n - 2)):
        extra[i] = 0  # at least one write is NOT duplicated, at least two are
    words = rng.sample(WORDS, n + 4)
    plain_writes = [(f"{w}-{run}", k) for w, k in zip(words[:n], extra, strict=True)]
    a0, a1, timed_out, b0 = (f"{w}-{run}" for w in words[n:])
    return plain_writes, (a0, a1, timed_out, b0)


def _stored_twice(log: list[ins.Batch], plain_writes: list[tuple[str, int]]) -> set[frozenset[int]]:
    """The plain producer's writes that reached the log more than once: what reached it decides, not the plan."""
    want = set()
    for value, _ in plain_writes:
        offsets = frozenset(
            x.base_offset for x in log if x.producer_id == -1 and x.records and x.records[0].value == value
        )
        if len(offsets) > 1:
            want.add(offsets)
    return want


def _groups(answer: Any) -> set[frozenset[int]]:
    groups = set()
    for group in answer or []:
        offsets = frozenset(int(getattr(b, "base_offset", b)) for b in group)
        if len(offsets) > 1:
            groups.add(offsets)
    return groups


@guarded("t2", points=2)
def check_find_duplicates(cluster: Cluster, find_duplicates: Callable[[list[ins.Batch]], Any]) -> Verdict:
    """Task 2: the learner's ``find_duplicates`` on a real log with several duplicated writes and decoys."""
    topic, log, want = duplicate_scenario(cluster)
    got = _groups(find_duplicates(list(log)))
    cluster.admin.delete_topic(topic)
    by_offset = {b.base_offset: b for b in log}
    rule = (
        "idempotent batches are the same write when (producer id, epoch, first seq, last seq) match; "
        "batches with producer id -1 carry no identity, so only their records can be compared."
    )
    reasons = [
        f"your group {sorted(g)}: {why}"
        for g in sorted(got - want, key=min)
        if (why := cases.what_it_mixes(g, by_offset))
    ]
    missed = sorted(sorted(g) for g in want - got)
    if missed:
        reasons.append(
            f"you missed {missed}: producer-id -1 batches with the same records, written by one send and its retries"
        )
    return verdict(
        "t2",
        got == want,
        ok=f"found the {len(want)} duplicated writes: offsets {sorted(sorted(g) for g in want)}.",
        saw=sorted(sorted(g) for g in got),
        expected=sorted(sorted(g) for g in want),
        hint="; ".join(reasons[:2] + [rule]),
        points=2,
    )


@guarded("t3")
def check_new_leader(cluster: Cluster, predict_new_leader: Callable[[list[int], list[int], int], int]) -> Verdict:
    """Task 3: predict the new leader on a table of cases, then kill a real leader and compare.

    The table (drawn at run time) is judged first, without harming the cluster; then a broker
    drawn at run time leads two partitions whose successors differ, and is killed.
    """
    rng = random.Random()
    hint = (
        "the controller walks the replica list in its assigned order and takes the first replica that is "
        "in the ISR and alive."
    )
    wrong = []
    for c in cases.leader_cases(rng):
        got = predict_new_leader(list(c.replicas), list(c.isr), c.killed)
        if got != c.expected:
            wrong.append(f"{c}: you predicted {got!r}, the controller picks {c.expected}")
    if wrong:
        return verdict("t3", False, ok="", saw="; ".join(wrong[:3]), expected="the new leader in every case", hint=hint)

    killed = rng.choice(sorted(cluster.brokers()))
    a, b = rng.sample([x for x in cluster.brokers() if x != killed], 2)
    assignment = [[killed, a, b], [killed, b, a]]
    topic = _topic(cluster, "leader", assignment)
    predicted, actual = {}, {}
    try:
        for p, replicas in enumerate(assignment):
            predicted[p] = predict_new_leader(list(replicas), sorted(cluster.isr(topic, p)), killed)
        cluster.kill(f"broker-{killed}")
        for p in predicted:
            actual[p] = cluster.wait_for_new_leader(topic, p, old_leader=killed)
    finally:
        heal(cluster)
        cluster.admin.delete_topic(topic)
    return verdict(
        "t3",
        predicted == actual,
        ok=f"broker {killed} died; brokers {actual[0]} and {actual[1]} took over its two partitions, as you predicted.",
        saw=f"for replicas {assignment} with broker {killed} killed you predicted {[predicted[p] for p in (0, 1)]}",
        expected=f"{[actual[p] for p in (0, 1)]} (what the controller chose)",
        hint=hint,
    )


RESTART_CHOICES = {
    "a": "the broker forgets all sequence numbers when a producer disconnects",
    "b": "the new instance gets a new producer id and starts again at sequence 0, so the broker cannot tie "
    "its resend to the first write",
    "c": "retries are switched off after a restart",
    "d": "the broker keeps only the last 5 batches, and a restart takes longer than 5 batches",
}


@guarded("t4")
def check_restart_answer(answer: Any) -> Verdict:
    """Task 4: why can a restarted producer write a duplicate? (a checked choice)"""
    return verdict(
        "t4",
        str(answer).strip().lower() == "b",
        ok="right: a new instance is a new producer id.",
        saw=repr(answer),
        expected="one of " + ", ".join(RESTART_CHOICES),
        hint="look at step 6 and at 'A restarted producer is a stranger' in notebook 01.",
    )


@guarded("t5")
def check_window_error(cluster: Cluster, predicted_error: Any) -> Verdict:
    """Task 5: the broker's answer to a replay of a batch 6 writes back; predicted, then measured."""
    proxy = Proxy.connect(cluster)
    topic = _topic(cluster, "window")
    p = demo.producer(cluster, f"lab01-t5-{uuid.uuid4().hex[:6]}")
    for i in range(6):
        demo.send(p, topic, 0, f"w{i}")
    item = proxy.replay(client_id=p.client_id, base_sequence=0)["response"]["items"][0]  # type: ignore[attr-defined]
    cluster.admin.delete_topic(topic)
    actual, name = item["error_code"], item["error"]
    return verdict(  # the scenario is the same at every run: a failure does not say the broker's answer
        "t5",
        str(predicted_error).strip() in (str(actual), name),
        ok=f"the broker answered {actual} ({name}), as you predicted.",
        saw=f"you predicted {predicted_error!r}, which is not what the broker answered",
        expected="the error code (or its name) the broker answers to a batch older than its window",
        hint="the broker remembers the last 5 batches per producer and partition; what does it say "
        "to a sequence number older than that?",
    )
