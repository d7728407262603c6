"""Checks of lab 01 (the idempotent producer): each judges behaviour on the live cluster.

Every check makes its own topic and client ids, so it stands alone: a learner
who fails task 2 can still pass task 3, and a check can be run again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from eoslab import inspect as ins
from eoslab._heal import heal
from eoslab.cluster import Cluster
from eoslab.demos import idempotent as demo
from eoslab.faults import Proxy, demo_producer_config
from eoslab.grading._checks import Verdict, guarded, verdict


def _topic(cluster: Cluster, name: str, assignment: list[list[int]] | None = None) -> str:
    topic = f"lab01-{name}-{uuid.uuid4().hex[:6]}"
    cluster.admin.create_topic(topic, replica_assignment=assignment or [[1, 2, 3]])
    return topic


@guarded("t1", points=2)
def check_survives_ack_loss(cluster: Cluster, conf: dict[str, Any]) -> Verdict:
    """Task 1: with the learner's settings, a lost acknowledgement must not write a second copy."""
    if not isinstance(conf, dict):
        raise TypeError(f"conf must be a dict of librdkafka settings, not {type(conf).__name__}")
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
    with proxy.drop_response(api="Produce", client_id=cid, close=True) as fault:
        delivery = demo.send(p, topic, 0, "exactly once, please")
        fired = fault.fired
    on_disk = demo.batches(cluster, topic, 0, values=False)
    cluster.admin.delete_topic(topic)
    return verdict(
        "t1",
        delivery.ok and fired == 1 and len(on_disk) == 1,
        ok="the ack was lost, the batch was sent again, and the broker kept one copy.",
        saw=f"{len(on_disk)} batch(es) on disk at offsets {list(on_disk['base_offset'])} for one record "
        f"(delivery: {delivery.error or 'ok'})",
        expected="exactly 1 batch",
        hint="which setting gives the producer an id and sequence numbers the broker can check?",
        points=2,
    )


def duplicate_scenario(cluster: Cluster) -> tuple[str, list[ins.Batch], set[frozenset[int]]]:
    """A real partition log with known duplicates, and the groups a correct answer returns.

    1. an idempotent producer writes "a", "b", "c";
    2. a non-idempotent producer's "x" loses its ack and is written twice (producer id -1);
    3. a restarted application (a new idempotent producer) resends "c".
    Only 2. is the same write twice; 3. is a new write that happens to repeat a value.
    """
    proxy = Proxy.connect(cluster)
    topic = _topic(cluster, "dups")
    run = uuid.uuid4().hex[:6]
    first = demo.producer(cluster, f"lab01-t2-a-{run}")
    for v in ("a", "b", "c"):
        demo.send(first, topic, 0, v)
    plain = demo.producer(cluster, f"lab01-t2-x-{run}", idempotent=False)
    with proxy.drop_response(api="Produce", client_id=plain.client_id, close=True):  # type: ignore[attr-defined]
        demo.send(plain, topic, 0, "x")
    restarted = demo.producer(cluster, f"lab01-t2-c-{run}")
    demo.send(restarted, topic, 0, "c")
    log = list(ins.batches(cluster, topic, 0, records=True, data=True))
    x_offsets = frozenset(b.base_offset for b in log if b.producer_id == -1)
    return topic, log, {x_offsets}


def _groups(answer: Any) -> set[frozenset[int]]:
    groups = set()
    for group in answer or []:
        offsets = frozenset(int(getattr(b, "base_offset", b)) for b in group)
        if len(offsets) > 1:
            groups.add(offsets)
    return groups


@guarded("t2", points=2)
def check_find_duplicates(cluster: Cluster, find_duplicates: Callable[[list[ins.Batch]], Any]) -> Verdict:
    """Task 2: the learner's ``find_duplicates`` on a real log that holds one duplicated write."""
    topic, log, want = duplicate_scenario(cluster)
    got = _groups(find_duplicates(log))
    cluster.admin.delete_topic(topic)
    by_offset = {b.base_offset: b for b in log}
    hint = (
        "idempotent batches are the same write when (producer id, epoch, first seq, last seq) match; "
        "batches with producer id -1 carry no identity, so only their records can be compared."
    )
    extra = got - want
    if extra:
        pids = sorted({by_offset[o].producer_id for g in extra for o in g if o in by_offset})
        hint = (
            f"your groups {sorted(map(sorted, extra))} join batches of producer ids {pids}: a restarted "
            "producer gets a NEW id, so its resend is a new write (that is why idempotence cannot cover "
            "an application restart). " + hint
        )
    return verdict(
        "t2",
        got == want,
        ok=f"found the one duplicated write: offsets {sorted(next(iter(want)))}.",
        saw=sorted(map(sorted, got)),
        expected=sorted(map(sorted, want)),
        hint=hint,
        points=2,
    )


@guarded("t3")
def check_new_leader(cluster: Cluster, predict_new_leader: Callable[[list[int], list[int], int], int]) -> Verdict:
    """Task 3: predict which replica becomes leader when the leader is killed; then kill it and see."""
    replicas = [1, 3, 2]
    topic = _topic(cluster, "leader", [replicas])
    isr = sorted(cluster.isr(topic, 0))
    predicted = predict_new_leader(list(replicas), list(isr), 1)
    try:
        cluster.kill("broker-1")
        actual = cluster.wait_for_new_leader(topic, 0, old_leader=1)
    finally:
        heal(cluster)
        cluster.admin.delete_topic(topic)
    return verdict(
        "t3",
        predicted == actual,
        ok=f"broker {actual} took over, as you predicted.",
        saw=f"you predicted broker {predicted}",
        expected=f"broker {actual} (what the controller chose)",
        hint="the controller walks the replica list in its assigned order and takes the first "
        "replica that is in the ISR and alive.",
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
    return verdict(
        "t5",
        str(predicted_error).strip() in (str(actual), name),
        ok=f"the broker answered {actual} ({name}), as you predicted.",
        saw=f"you predicted {predicted_error!r}",
        expected=f"{actual} ({name})",
        hint="the broker remembers the last 5 batches per producer and partition; what does it say "
        "to a sequence number older than that?",
    )
