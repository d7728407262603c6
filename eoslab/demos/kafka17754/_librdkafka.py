"""KAFKA-17754 on the learner's cluster: a request of transaction N that arrives during transaction N+1.

Jepsen's Bufstream analysis (2024, https://jepsen.io/analyses/bufstream-0.1.0) found that Kafka's
original transaction protocol lets a request delayed in the network land in a LATER transaction of the
same producer: nothing in EndTxn or Produce (before KIP-890) says which transaction it belongs to, only
the producer id and epoch, which stay the same from one transaction to the next. KIP-890's
transaction version 2 (TV2) bumps the epoch at every EndTxn, so a late copy carries a stale epoch.

Each experiment runs module 05's EOS processor (librdkafka: the original protocol, EndTxn v1) through
the fault proxy, makes one request "late", and lets the history checker judge the output:

- :func:`delayed_endtxn`: the answer to transaction N's EndTxn(commit) is lost (the coordinator
  committed N; the client does not know); librdkafka sends it again after ``socket.timeout.ms`` and
  hears NONE. Then, while N+1 is open (its Produce to one partition written, its Produce to the other
  lost), another copy of N's EndTxn is delivered: the same transactional id, producer id, epoch and
  ``Committed=true``.
- :func:`delayed_produce`: a Produce of transaction N is lost on its way; while N+1 is open, the proxy
  replays the lost copy byte for byte.
- :func:`eoslab.demos.kafka17754.delayed_endtxn_java`: the delayed EndTxn with the Java 4.4
  client (TV2, EndTxn v5), in its own module.

A late copy is a request the client sent once more, delivered later: the coordinator or the leader
cannot tell it from the original (they match producer id, epoch and, for Produce, sequence numbers;
the connection does not count). What the broker answered the late copy, what the processor then did,
and the checker's verdict are the experiment's results: the cluster decides, not the expectation.

Timeouts: ``transaction.timeout.ms`` = 10 s, so librdkafka's ``socket.timeout.ms`` = 9.9 s (derived
in transactional mode) is how long a lost request waits before its resend; CATCH_UP of the processor.
The delayed Produce's processor sets ``message.timeout.ms`` = 4 s (PRODUCE_MESSAGE_TIMEOUT_MS), the delayed
EndTxn's 7 s (ENDTXN_MESSAGE_TIMEOUT_MS), both inside the transaction timeout: see there why.
"""

from __future__ import annotations

import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab._timeouts import CLIENT_CALL
from eoslab._wait import wait_until
from eoslab.clients import producer
from eoslab.demos import _kept
from eoslab.demos.kafka17754._open import arm, open_transaction
from eoslab.demos.pipeline import PipelineError, PipelineProcess, layout, origin_of
from eoslab.faults import Fault, Proxy, error_name
from eoslab.history import Aborted, Committed, Verdict, check, read_both, read_final, read_history

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

TXN_TIMEOUT_MS = 10_000
"""transaction.timeout.ms of the experiment's processor: socket.timeout.ms = 9.9 s, the resend delay."""
STEP_WAIT = 60.0
"""One step of the experiment (the processor reaching its N-th request, a resend after 9.9 s, a commit):
seconds; 60 s leaves room on a busy laptop."""
RECORDS = 500
"""25 s of input at FEED_RATE: the late request comes after a 10 s stall (the lost request's
socket.timeout.ms), and the input must still be arriving then."""
MAX_RESTARTS = 3
"""The processor may stop on a fatal error the late request caused; it is restarted (as a supervisor would)."""


@dataclass
class Experiment:
    """One run of a KAFKA-17754 variant: the late request, the broker's answer to it, and the verdict."""

    variant: str
    client: str
    late_request: dict[str, Any] = field(default_factory=dict)
    late_answer: dict[str, Any] = field(default_factory=dict)
    verdict: Verdict | None = None
    histories: tuple[Path, ...] = ()
    notes: list[str] = field(default_factory=list)
    exits: list[int | None] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """One row: what the late copy got, what the processor did, what the checker found."""
        return {
            "variant": self.variant,
            "client": self.client,
            "late answer": self.late_answer.get("error") or "NONE",
            "processor exits": ", ".join(str(e) for e in self.exits) or "-",
            **({} if self.verdict is None else {k: v for k, v in self.verdict.counts.items()}),
            "valid": None if self.verdict is None else self.verdict.valid(),
        }


def _error(resp: dict[str, Any] | None) -> str | None:
    if not resp:
        return None
    return (
        resp.get("error") or resp.get("error_name") or (None if not resp.get("error_code") else str(resp["error_code"]))
    )


FEED_RATE = 20.0
"""Inputs per second, alternating partitions, while the processor runs: every batch (up to 20 records,
0.5 s of polling) then holds records of both partitions, so each transaction writes to both output
partitions, two Produce requests to two leaders. An input written all at once would be fetched a partition
at a time, and a transaction would write to one."""


def records_s(feeder: _Feeder) -> float:
    return feeder.records / FEED_RATE


class _Feeder(threading.Thread):
    """Writes the input at FEED_RATE in the background (the live stream a pipeline normally reads)."""

    def __init__(self, cluster: Cluster, topic: str, records: int) -> None:
        super().__init__(daemon=True)
        self.cluster, self.topic, self.records = cluster, topic, records
        self.error: BaseException | None = None
        self.stopped = threading.Event()

    def stop(self) -> None:
        """No more input (an experiment that failed midway): the thread ends within one record's time."""
        self.stopped.set()
        if self.is_alive():
            self.join(CLIENT_CALL)

    def run(self) -> None:
        try:
            p = producer(self.cluster)
            start = time.monotonic()
            for i in range(self.records):
                if self.stopped.is_set():
                    return
                p.produce(self.topic, value=f"v{i}".encode(), key=str(i).encode(), partition=i % 2)
                p.poll(0)
                time.sleep(max(0.0, start + (i + 1) / FEED_RATE - time.monotonic()))
            if p.flush(CLIENT_CALL):
                raise PipelineError(f"inputs of {self.topic} not acknowledged in {CLIENT_CALL:g} s")
        except BaseException as e:  # noqa: BLE001 - reported by the experiment's thread
            self.error = e


def _setup(
    cluster: Cluster, variant: str, records: int, run_dir: Path | None, **process_kwargs: Any
) -> tuple[PipelineProcess, str, str, _Feeder]:
    name = f"k17754-{variant}-{uuid.uuid4().hex[:6]}".replace("_", "-")
    plan = layout(cluster, "drop_endtxn_response", name)  # the course's layout, no victim
    src, out = f"exp-{name}-in", f"exp-{name}-out"
    cluster.admin.create_topic(src, replica_assignment=plan.inputs)
    cluster.admin.create_topic(out, replica_assignment=plan.outputs)
    feeder = _Feeder(cluster, src, records)
    folder = Path(run_dir) if run_dir else Path(tempfile.mkdtemp(prefix=f"eoslab-{name}-"))
    p = PipelineProcess(
        cluster,
        "eos",
        input=src,
        output=out,
        history_dir=folder,
        name=name,
        group=plan.group,
        transactional_id=plan.transactional_id,
        transaction_timeout_ms=TXN_TIMEOUT_MS,
        proxied=True,
        **process_kwargs,
    )
    return p, src, out, feeder


LATE_CLIENT = "eoslab-late-copy"
"""The client.id the late copies are sent with (the broker does not look at it; the trace shows it apart)."""
PRODUCE_MESSAGE_TIMEOUT_MS = 4000
"""message.timeout.ms of the delayed Produce's processor. librdkafka times a Produce request out at its
first record's remaining message timeout when that is shorter than socket.timeout.ms (rdkafka_request.c),
so the lost Produce fails within ~5 s (4 s + librdkafka's 1 s timeout scan) and the processor's abort
reaches the coordinator ~5 s before the coordinator's own timeout abort (transaction.timeout.ms = 10 s
after the transaction began, checked every second). With librdkafka's default (message.timeout.ms =
transaction.timeout.ms) both come at ~10 s and race: seen once in CI, the coordinator's abort came first,
bumped the epoch, and the processor's own EndTxn(abort) was answered _FENCED (fatal)."""
ENDTXN_MESSAGE_TIMEOUT_MS = 7000
"""message.timeout.ms of the delayed EndTxn's processor: above the 5 s the written Produce's answer is held
(``_open.HOLD_S``: those records must not fail), below transaction.timeout.ms (10 s). When the transaction the
rules catch wrote partition 1 only (its batch had no record for partition 0), its lost records fail and the
processor aborts; with librdkafka's default (message.timeout.ms = transaction.timeout.ms) that abort and the
coordinator's own timeout abort both came at ~10 s, the coordinator's first, and the processor's EndTxn(abort)
was answered _FENCED (fatal: exit 3, the experiment stopped). Seen once on 4.4.0, load 16-20. At 7 s the
processor ends its own transaction, and the rules are added again for the next one (``_open.py``)."""
PRODUCE_HOLD_S = 2.0
"""The delayed Produce holds the next transaction's Produce this long (shorter than its message
timeout, so the held records are not failed too)."""


def plan_leaders(cluster: Cluster, topic: str) -> tuple[int, int]:
    """The leaders of the topic's partitions 0 and 1."""
    return cluster.leader(topic, 0), cluster.leader(topic, 1)


def _wait_applied(p: PipelineProcess, f: Fault, what: str) -> dict[str, Any]:
    """Until the rule has ACTED (its request dropped or held, its answer dropped or held): that trace row.

    Not until it fired: a rule on the answer fires when the request passes, and the answer it drops
    comes later (seen once: the experiment looked for the dropped answer before it had arrived)."""

    def acted() -> dict[str, Any] | None:
        if not p.running:
            raise PipelineError(f"{p.name} exited ({p.returncode}) before {what}: {p.stderr().strip()}")
        return f.applied()

    row = wait_until(acted, timeout=STEP_WAIT, what=what, interval=0.05, fatal=(PipelineError,), progress=False)
    assert row is not None
    return row


def _commits(p: PipelineProcess) -> int:
    path = p.history()
    return sum(isinstance(e, Committed) for e in read_history(path).events) if path.exists() else 0


def _finish(
    cluster: Cluster, exp: Experiment, p: PipelineProcess, proxy: Proxy, src: str, out: str, feeder: _Feeder
) -> Experiment:
    """Let the processor finish (restarted if the late request made it stop), stop it, judge the output."""
    feeder.join(records_s(feeder) + CLIENT_CALL)
    if feeder.error is not None:
        raise feeder.error
    deadline = time.monotonic() + 3 * STEP_WAIT
    restarts = 0
    while True:
        try:
            p.wait_caught_up(timeout=max(1.0, deadline - time.monotonic()))
            break
        except Exception:
            if p.running or restarts >= MAX_RESTARTS:
                raise
            exp.exits.append(p.returncode)
            last = (p.stderr().strip().splitlines() or ["no message"])[-1]
            exp.notes.append(f"the processor exited {p.returncode}: {last}; restarted")
            restarts += 1
            p.start()
    exp.exits.append(p.stop())
    rows = list(proxy.trace(client_id=p.client_id)) + list(proxy.trace(client_id=LATE_CLIENT))
    exp.trace = sorted(rows, key=lambda r: int(r["id"]))
    exp.histories = tuple(p.histories())
    exp.verdict = check(
        exp.histories, read_both(cluster, out), inputs=read_final(cluster, src, "read_committed"), origin=origin_of
    )
    return exp


def send_late_endtxn(proxy: Proxy, row: dict[str, Any]) -> dict[str, Any]:
    """One more copy of the EndTxn(commit) of trace ``row`` (same transactional id, producer id, epoch and
    version), sent from LATE_CLIENT to the broker it went to: the coordinator's answer."""
    body = {
        "TransactionalId": row["request"]["transactional_id"],
        "ProducerId": row["request"]["producer_id"],
        "ProducerEpoch": row["request"]["producer_epoch"],
        "Committed": True,
    }
    answer = proxy.request(row["broker"], "EndTxn", body, version=row["version"], client_id=LATE_CLIENT)
    code = int(answer.get("ErrorCode", 0))
    return {"error_code": code, "error": error_name(code)}


def delayed_endtxn(
    cluster: Cluster, *, records: int = RECORDS, run_dir: Path | None = None, reuse: bool = False
) -> Experiment:
    """Transaction N's EndTxn(commit) delivered again while N+1 is open (librdkafka, original protocol).

    ``reuse``: the last run kept under the runs folder (:mod:`eoslab.demos._kept`), if any; every run is kept."""
    if reuse and (kept := _kept.last("endtxn", Experiment, cluster.backend.name)) is not None:
        return kept
    proxy = Proxy.connect(cluster)
    p, src, out, feeder = _setup(cluster, "endtxn", records, run_dir, message_timeout_ms=ENDTXN_MESSAGE_TIMEOUT_MS)
    exp = Experiment("delayed EndTxn", "librdkafka (original protocol)")
    # The ANSWER is lost, not the request: the coordinator commits N at once. A lost request would race
    # the resend (socket.timeout.ms = transaction.timeout.ms - 100 after it was sent) against the
    # coordinator's own timeout abort of N (transaction.timeout.ms after N began, checked every second);
    # with a lost request, N once never committed on a shared machine (docs/fault-matrix.md).
    lost = proxy.drop_response(api="EndTxn", client_id=p.client_id, nth=2, times=1).inject()

    def steps() -> None:
        row = _wait_applied(p, lost, "the processor's 2nd EndTxn and its lost answer")
        exp.late_request = {"broker": row["broker"], "version": row["version"], **row["request"]}
        n = _commits(p) + 1
        exp.notes.append(
            f"EndTxn(commit) of transaction {n} reached the coordinator (broker {row['broker']}); its answer was lost"
        )
        # The processor now waits socket.timeout.ms (9.9 s) to resend it, and sends nothing else: the rules added
        # now act on the next transaction's Produces. Its Produce to partition 0's leader is written and its answer
        # held; its Produce to partition 1's leader is lost (librdkafka fails those records after
        # message.timeout.ms = 7 s). Added at any other moment they could act on two transactions (_open.py).
        p0, p1 = plan_leaders(cluster, out)
        armed = arm(proxy, p.client_id, p0, p1)
        _wait_commits(p, n)
        exp.notes.append(f"librdkafka sent it again after socket.timeout.ms, answered NONE: transaction {n} committed")
        opened = open_transaction(proxy, p.client_id, (p0, p1), armed, lambda f, what: _wait_applied(p, f, what))
        m = _commits(p) + 1  # the transaction open now
        exp.late_answer = send_late_endtxn(proxy, row)
        note = f"transaction {m}: its Produce to broker {p0} written (answer held), its Produce to broker {p1} lost"
        if opened.attempts > 1:
            note += f" ({opened.attempts - 1} earlier transaction(s) wrote one partition only)"
        exp.notes.append(note)
        exp.notes.append(
            f"the late copy of transaction {n}'s EndTxn (epoch {row['request']['producer_epoch']}) delivered during "
            f"transaction {m}: {exp.late_answer['error']}"
        )

    return _kept.keep(_run(cluster, exp, p, proxy, (src, out), feeder, steps), "endtxn", cluster.backend.name)


def _run(
    cluster: Cluster,
    exp: Experiment,
    p: PipelineProcess,
    proxy: Proxy,
    topics: tuple[str, str],
    feeder: _Feeder,
    steps: Callable[[], None],
) -> Experiment:
    """Start the processor and its input, run the experiment's ``steps``, let the processor finish and judge.
    Whatever fails on the way, the rules are cleared, the input stops and the processor is killed: nothing
    the experiment started outlives it."""
    try:
        try:
            p.start()
            feeder.start()
            steps()
        finally:
            proxy.clear_rules(client_id=p.client_id)
        return _finish(cluster, exp, p, proxy, *topics, feeder)
    finally:
        feeder.stop()
        p.kill()


def _wait_commits(p: PipelineProcess, n: int) -> None:
    """Until the processor has committed ``n`` transactions; one sentence if it stopped instead."""

    def committed() -> bool:
        if _commits(p) >= n:
            return True
        if not p.running:
            last = (p.stderr().strip().splitlines() or ["no message"])[-1]
            raise PipelineError(f"{p.name} exited ({p.returncode}) before transaction {n} committed: {last}")
        return False

    wait_until(committed, timeout=STEP_WAIT, what=f"transaction {n} to commit", fatal=(PipelineError,), progress=False)


def delayed_produce(
    cluster: Cluster, *, records: int = RECORDS, run_dir: Path | None = None, reuse: bool = False
) -> Experiment:
    """A Produce of transaction N replayed byte for byte while N+1 is open (librdkafka, original protocol).

    ``reuse``: the last run kept under the runs folder (:mod:`eoslab.demos._kept`), if any; every run is kept."""
    if reuse and (kept := _kept.last("produce", Experiment, cluster.backend.name)) is not None:
        return kept
    proxy = Proxy.connect(cluster)
    p, src, out, feeder = _setup(cluster, "produce", records, run_dir, message_timeout_ms=PRODUCE_MESSAGE_TIMEOUT_MS)
    exp = Experiment("delayed Produce", "librdkafka (original protocol)")
    lost = proxy.drop_request(api="Produce", client_id=p.client_id, nth=3, times=1).inject()

    def steps() -> None:
        row = _wait_applied(p, lost, "the processor's 3rd Produce")
        n = _commits(p) + 1
        exp.late_request = {"row": row["id"], "broker": row["broker"], **(row["request"]["items"] or [{}])[0]}
        exp.notes.append(f"a Produce of transaction {n} (to broker {row['broker']}) lost on its way")
        _wait_commits(p, n)
        aborts = [e for e in read_history(p.history()).events if isinstance(e, Aborted)]
        exp.notes.append(
            f"librdkafka did not resend it: its records failed after message.timeout.ms "
            f"({PRODUCE_MESSAGE_TIMEOUT_MS / 1000:g} s); the processor aborted ({aborts[0].reason}) and redid the batch"
            if aborts
            else "librdkafka resent it after socket.timeout.ms; the transaction committed"
        )
        hold = proxy.delay_response(PRODUCE_HOLD_S, api="Produce", client_id=p.client_id, times=1).inject()
        _wait_applied(p, hold, "the answer to a Produce of a later transaction")
        m = _commits(p) + 1 + len([e for e in read_history(p.history()).events if isinstance(e, Aborted)])
        answer = proxy.replay(row["id"])
        exp.late_answer = {"error": _error(answer.get("response")) or "NONE", "response": answer.get("response")}
        exp.notes.append(f"the lost copy replayed during transaction {m}: {exp.late_answer['error']}")

    return _kept.keep(_run(cluster, exp, p, proxy, (src, out), feeder, steps), "produce", cluster.backend.name)
