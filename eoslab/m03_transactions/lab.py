"""Checks of lab 03 (transactions): each runs its own scenario on the live cluster and judges what happened.

Every check draws its ids, values and patterns at run time (a constant cannot
pass) and stands alone. The evidence is Kafka's: FindCoordinator's answer, what
a ``read_committed`` consumer sees, the markers on disk, the group's committed
offsets, the coordinator's records in ``__transaction_state``.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

from eoslab import inspect as ins
from eoslab.cluster import Cluster
from eoslab.faults import Proxy
from eoslab.labcheck import Verdict, guarded, verdict
from eoslab.m03_transactions import _lab_setup as setup
from eoslab.m03_transactions import lesson as txn

KINDS = setup.INTERNAL


def _run() -> str:
    return uuid.uuid4().hex[:6]


def _kafka_error(exc: Exception) -> Any:
    from confluent_kafka import KafkaException

    return exc.args[0] if isinstance(exc, KafkaException) and exc.args else None


def leaders(cluster: Cluster) -> dict[str, dict[int, int]]:
    """What task 1 gets: the leader of every partition of the two internal topics, from the metadata."""
    return {topic: {p.partition: p.leader for p in cluster.partitions(topic)} for topic in KINDS.values()}


def _reported(cluster: Cluster, keys: list[tuple[str, str]]) -> dict[tuple[str, str], int | None]:
    """(key, kind) -> the broker FindCoordinator names for it."""
    truth: dict[tuple[str, str], int | None] = {}
    for kind in KINDS:
        for c in ins.coordinators(cluster, [k for k, kd in keys if kd == kind], kind):  # type: ignore[arg-type]
            truth[(c.key, kind)] = c.reported
    return truth


def _coordinator_truth(
    cluster: Cluster, run: str
) -> tuple[dict[str, dict[int, int]], list[tuple[str, str]], set[str], dict[tuple[str, str], int | None]]:
    """The leaders table, fresh keys for it (and those hashing to Integer.MIN_VALUE), and FindCoordinator's
    answer for each key, measured while no leader moved."""
    setup.separate_partitions_0_and_48(cluster)
    for _ in range(3):  # a leader moving between the table and FindCoordinator would fail a right answer
        table = leaders(cluster)
        keys, minimal = setup.coordinator_keys(run, table)
        truth = _reported(cluster, keys)
        if leaders(cluster) == table:
            break
    return table, keys, minimal, truth


@guarded("t1")
def check_coordinators(
    cluster: Cluster, find_coordinator: Callable[[dict[str, dict[int, int]], str, str], Any]
) -> Verdict:
    """Task 1: ``find_coordinator(leaders, key, kind)`` names the broker FindCoordinator names, for fresh keys
    (two of them hashing to ``Integer.MIN_VALUE``); ``leaders`` is :func:`leaders` of the cluster."""
    table, keys, minimal, truth = _coordinator_truth(cluster, _run())
    wrong = [
        (k, kind, got, truth[(k, kind)])
        for k, kind in keys
        if (got := find_coordinator(table, k, kind)) != truth[(k, kind)]
    ]
    only_min = bool(wrong) and all(k in minimal for k, *_ in wrong)
    hint = (
        "these keys hash to Integer.MIN_VALUE: Kafka's Utils.abs maps it to 0, Python's abs() does not."
        if only_min
        else "the partition is Utils.abs(key.hashCode()) % 50 with JAVA's String.hashCode (h = 31*h + each UTF-16 "
        "code unit, in 32 bits); Python's hash() is a different function, salted per process. The coordinator is "
        "that partition's leader, of __transaction_state for a transactional id, of __consumer_offsets for a group."
    )
    return verdict(
        "t1",
        not wrong,
        ok=f"all {len(keys)} coordinators right, the two keys hashing to Integer.MIN_VALUE included.",
        saw="; ".join(
            f"{kind} {k!r}: you said {got!r}, FindCoordinator said {want}" for k, kind, got, want in wrong[:3]
        ),
        expected="the broker FindCoordinator names for every key",
        hint=hint,
    )


_T2_HINT = (
    "produce each record to A (partition 0) and B (partition 1), then send_offsets_to_transaction() with the "
    "offset AFTER the last record and consumer.consumer_group_metadata(), then commit_transaction(): "
    "offsets committed by the consumer itself are outside the transaction."
)
"""Task 2's hint when the transaction's evidence is incomplete."""


def _poll_input(consumer: Any, n: int) -> list[Any]:
    records: list[Any] = []
    for _ in range(20):  # the input is written and committed: a few polls get it
        records += [m for m in consumer.consume(n, 1.0) if m.error() is None]
        if len(records) >= n:
            break
    return records


def _transfer_raised(exc: Exception) -> Verdict:
    """The learner's call failed: say why, in Kafka's words."""
    err = _kafka_error(exc)
    hint = (
        "every produce() of a transactional producer belongs to a transaction: begin_transaction() first."
        if err is not None and err.name() == "_STATE"
        else "see the error; the notebook's steps 3 to 6 are the order."
    )
    return verdict("t2", False, ok="", saw=f"your transfer raised {type(exc).__name__}: {exc}", hint=hint, points=2)


def _transfer_problems(
    cluster: Cluster, *, in_topic: str, out_topic: str, group: str, pid: int, values: list[str]
) -> tuple[list[str], int]:
    """What the evidence of task 2 misses (read_committed view, COMMIT markers, the group's offset), and the
    ``__consumer_offsets`` partition of the group."""
    n = len(values)
    seen = {part: sorted(v for q, _, v in txn.read_values(cluster, out_topic, [0, 1]) if q == part) for part in (0, 1)}
    offsets_part = ins.coordinator_partition(group)
    wanted = [(out_topic, 0), (out_topic, 1), ("__consumer_offsets", offsets_part)]
    commits = {
        (m.topic, m.partition) for m in ins.markers_of(cluster, wanted, producer_ids=[pid]) if m.marker == "COMMIT"
    }
    committed = txn.committed_offsets(cluster, group, in_topic, [0]).get(0)
    problems = []
    for part in (0, 1):
        if seen[part] != sorted(values):
            problems.append(f"partition {'AB'[part]} shows {seen[part]} to read_committed")
    if ("__consumer_offsets", offsets_part) not in commits:
        problems.append(f"no COMMIT marker of your producer in __consumer_offsets-{offsets_part} (the group's)")
    if committed != n:
        problems.append(f"the group's committed offset is {committed}, not {n}")
    return problems, offsets_part


@guarded("t2", points=2)
def check_atomic_transfer(cluster: Cluster, transfer: Callable[..., Any]) -> Verdict:
    """Task 2: records to A and B plus the input offsets, in one transaction: judged by a read_committed
    consumer, the COMMIT markers on disk, and the group's committed offset."""
    from confluent_kafka import TopicPartition

    run = _run()
    n = random.randint(3, 7)
    in_topic, out_topic, group = f"lab03-in-{run}", f"lab03-out-{run}", f"lab03-grp-{run}"
    values = [f"v{i}-{run}-{random.randint(0, 999)}" for i in range(n)]
    txn.seed_input(cluster, in_topic, values)
    cluster.admin.create_topic(out_topic, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    p = setup.producer(cluster, f"lab03-t2-{run}", f"lab03-t2-{run}")
    p.init_transactions(30)
    pid = p.eos().producer_id
    consumer = txn.consumer(cluster, group, conf={"client.id": f"lab03-t2-in-{run}"})
    try:
        consumer.assign([TopicPartition(in_topic, 0, 0)])
        records = _poll_input(consumer, n)
        try:
            transfer(p, consumer, records, out_topic)
        except Exception as exc:  # noqa: BLE001 - the learner's call failed: say why, in Kafka's words
            return _transfer_raised(exc)
    finally:
        consumer.close()
    txn.wait_settled(cluster, [p.transactional_id])
    problems, offsets_part = _transfer_problems(
        cluster, in_topic=in_topic, out_topic=out_topic, group=group, pid=pid, values=values
    )
    return verdict(
        "t2",
        not problems,
        ok=f"{n} records in A and B; COMMIT markers there and in __consumer_offsets-{offsets_part}; offset {n}.",
        saw="; ".join(problems),
        expected=f"each of the {n} values once in A and once in B (read_committed), offset {n} committed with them",
        hint=_T2_HINT,
        points=2,
    )


@guarded("t3")
def check_visible(cluster: Cluster, visible: Callable[[str, str], Any]) -> Verdict:
    """Task 3: ``visible(bootstrap, topic)`` returns what a downstream application may use, after a random
    pattern of commits and aborts whose aborted data is on disk."""
    run = _run()
    topic = f"lab03-vis-{run}"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    pattern = [True, True, False] + [random.random() < 0.5 for _ in range(random.randint(1, 3))]
    random.shuffle(pattern)
    committed, aborted = setup.write_pattern(cluster, topic, run, pattern)
    on_disk = {v for _, _, v in txn.read_values(cluster, topic, [0, 1], isolation="read_uncommitted")}
    assert set(aborted) <= on_disk, "the scenario's aborted data must be on disk"
    got = [str(v) for v in (visible(cluster.bootstrap_servers(), topic) or [])]
    leaked = sorted(set(got) & set(aborted))
    hint = (
        f"{leaked} were aborted: they stay on disk and a read_uncommitted consumer returns them; "
        "ask for isolation.level=read_committed (say it: the Java client's default is read_uncommitted)."
        if leaked
        else "read both partitions from the beginning to their end (assign them, auto.offset.reset=earliest)."
    )
    return verdict(
        "t3",
        Counter(got) == Counter(committed),
        ok=f"{len(committed)} committed values; the {len(aborted)} aborted ones are on disk but not in your view.",
        saw=sorted(got),
        expected=sorted(committed),
        hint=hint,
    )


_T4_HINT = (
    "process each batch in a transaction; on an error whose fatal() is true, STOP (return or raise): "
    "another instance owns the transactional id now. A new producer with the same id would fence THAT one."
)
"""Task 4's hint when the worker did not stop cleanly at the fence."""


def _run_worker(
    worker: Callable[..., Any], make_producer: Callable[[], Any], batches: setup.Batches, topic: str
) -> str:
    """Run the learner's worker until it returns or raises a fatal Kafka error; how it stopped, in words."""
    from confluent_kafka import KafkaException

    try:
        worker(make_producer, batches, topic)
    except KafkaException as exc:
        err = exc.args[0]
        if not err.fatal():
            raise
        return f"raised {err.name()}"
    return "returned"


def _zombie_problems(
    pulled_after_fence: int, successor_commit: dict[str, Any], got: list[Any], want: list[Any]
) -> list[str]:
    problems = []
    if pulled_after_fence:
        problems.append(f"after the fatal error your worker went on to {pulled_after_fence} more batch(es)")
    if not successor_commit["ok"]:
        problems.append(f"the legitimate successor could not commit ({successor_commit.get('error')}): it was fenced")
    if Counter(got) != Counter(want):
        problems.append(f"read_committed shows {got}")
    return problems


@guarded("t4", points=2)
def check_zombie_handler(cluster: Cluster, worker: Callable[..., Any]) -> Verdict:
    """Task 4: ``worker(make_producer, batches, topic)`` writes batch after batch in transactions; the check
    fences it for real (a successor with the same transactional id) and asserts it stopped and wrote nothing after."""
    run = _run()
    tid, topic = f"lab03-t4-{run}", f"lab03-zombie-{run}"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3]])
    made: list[txn.TxnProducer] = []

    def make_producer() -> txn.TxnProducer:
        made.append(setup.producer(cluster, tid, f"lab03-t4-w{len(made)}-{run}"))
        return made[-1]

    successor = setup.producer(cluster, tid, f"lab03-t4-successor-{run}")
    marker = f"successor-{run}"

    def fence() -> None:
        successor.init_transactions(60)  # the worker's producer is now a zombie
        successor.begin_transaction()
        successor.produce(topic, marker.encode(), partition=0)
        successor.flush(30)

    k = random.randint(1, 3)
    batches = setup.Batches(run, k, k + 3, fence)
    stopped_by = _run_worker(worker, make_producer, batches, topic)
    if batches.given <= k:
        return verdict(
            "t4",
            False,
            ok="",
            saw=f"your worker took {batches.given} batch(es) and stopped before the fence (before batch {k})",
            hint="write every batch it is given, one transaction each, until it is fenced.",
            points=2,
        )
    successor_commit = txn.attempt(successor.commit_transaction, 30)
    txn.wait_settled(cluster, [tid])
    got = [v for _, _, v in txn.read_values(cluster, topic, [0])]
    problems = _zombie_problems(batches.pulled_after_fence, successor_commit, got, batches.values(k) + [marker])
    return verdict(
        "t4",
        not problems,
        ok=f"fenced before batch {k}, your worker {stopped_by} and the successor committed; nothing of yours after.",
        saw="; ".join(problems),
        expected=f"batches 0..{k - 1} committed, then nothing from your worker, and the successor's record",
        hint=_T4_HINT,
        points=2,
    )


T5_PRODUCER = {"transaction.timeout.ms": 20000, "message.timeout.ms": 2000, "socket.timeout.ms": 1500}
"""Task 5's producer: a lost record times out after 2 s, well inside the transaction's 20 s."""
T5_ENDTXN_HELD_S = 3.0
"""How long the proxy holds the coordinator's answer to EndTxn in the "late EndTxn answer" case."""
T5_COMMIT_TIMEOUT_S = {"late EndTxn answer": 1.0, "lost Produce requests": 30.0}
"""The ``commit_timeout`` task 5 gives the learner's function, per fault. Below :data:`T5_ENDTXN_HELD_S`, so that the
commit times out (retriable) and must be called again. Above the lost records' ``message.timeout.ms``, so that the
commit call itself returns the abortable error, as notebook 03's step 12 shows it: a commit that times out while its
records are being timed out keeps running in librdkafka's background, and its late result can come back as the answer
of the abort that follows (librdkafka's resumable transactional calls, ``rd_kafka_txn_curr_api_set_result`` in
src/rdkafka_txnmgr.c), which failed the solution's correct abort once in twelve runs beside three CPU burners."""


@guarded("t5", points=2)
def check_commit_handling(cluster: Cluster, process_once: Callable[..., Any]) -> Verdict:
    """Task 5: ``process_once(producer, topic, values, commit_timeout)`` commits ``values`` exactly once through
    two faults in random order: EndTxn's answer late (the commit times out but is decided) and the Produce
    requests of the first attempt lost (the transaction must be aborted and done again)."""
    run = _run()
    proxy = Proxy.connect(cluster)
    cases = list(T5_COMMIT_TIMEOUT_S)
    random.shuffle(cases)
    failures = []
    for i, case in enumerate(cases):
        topic, tid = f"lab03-once-{run}-{i}", f"lab03-t5-{run}-{i}"
        cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3]])
        p = setup.producer(cluster, tid, tid, **T5_PRODUCER)
        p.init_transactions(30)
        values = [f"{case.split()[1]}-{run}-{j}" for j in range(random.randint(2, 4))]
        if case == "late EndTxn answer":
            fault = proxy.delay_response(T5_ENDTXN_HELD_S, api="EndTxn", client_id=tid)
        else:  # only the first attempt's epoch: librdkafka bumps the epoch when it aborts after a lost record
            fault = proxy.drop_request(api="Produce", client_id=tid, producer_epoch=p.eos().producer_epoch, times=None)
        error = None
        with fault:
            try:
                process_once(p, topic, values, T5_COMMIT_TIMEOUT_S[case])
            except Exception as exc:  # noqa: BLE001 - the learner's handler gave up: that is the verdict
                err = _kafka_error(exc)
                error = (
                    f"{err.name() if err is not None else type(exc).__name__}: {err.str() if err is not None else exc}"
                )
        seen = Counter(v for _, _, v in txn.read_values(cluster, topic, [0]))
        if error or seen != Counter(values):
            failures.append(
                f"{case}: {'raised ' + error if error else ''}{'; ' if error else ''}read_committed shows {dict(seen)}"
            )
    hint = "a commit that timed out (retriable) may already be decided: call commit_transaction() again, never "
    hint += "abort it (librdkafka answers _CONFLICT) and never process again; a commit that fails with "
    hint += "txn_requires_abort() must be aborted, then the same values processed again in a new transaction."
    return verdict(
        "t5",
        not failures,
        ok="both faults survived: each value committed exactly once.",
        saw=" | ".join(failures),
        expected="every value exactly once, the function returning normally",
        hint=hint,
        points=2,
    )


@guarded("t6", points=2)
def check_predict_states(cluster: Cluster, predict: Callable[[list[str]], Any]) -> Verdict:
    """Task 6: predict the records a scenario leaves in ``__transaction_state``; the check then runs it."""
    run = _run()
    rng = random.Random()
    plans = setup.scenarios(rng)
    predictions = [[(str(s), int(e)) for s, e in (predict(list(steps)) or [])] for steps in plans]
    topic = f"lab03-states-{run}"
    cluster.admin.create_topic(topic, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    group = txn.consumer(cluster, f"lab03-states-{run}")
    tids = [f"lab03-t6-{run}-{i}" for i in range(len(plans))]
    try:
        for steps, tid in zip(plans, tids, strict=True):
            setup.run_scenario(cluster, steps, tid, topic, group)
    finally:
        group.close()
    actual = setup.logged_states(cluster, tids)
    wrong = [
        (steps, pred, actual[tid])
        for steps, pred, tid in zip(plans, predictions, tids, strict=True)
        if pred != actual[tid]
    ]
    saw = "; ".join(f"for {steps} you predicted {pred}, the coordinator wrote {got}" for steps, pred, got in wrong[:2])
    hint = "compare with notebook 03's state tables: the coordinator logs states, not markers; which steps write "
    hint += "nothing, and when does a librdkafka producer's epoch change (a commit? a new instance's init? a fence? "
    hint += "a timeout?), and by how much?"
    return verdict(
        "t6",
        not wrong,
        ok=f"all {len(plans)} scenarios predicted record for record.",
        saw=saw,
        expected="your list to equal the coordinator's, (state, epoch - first epoch) per record",
        hint=hint,
        points=2,
    )
