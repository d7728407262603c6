"""Module 05's fault matrix, one cell at a time: a processor under one fault, healed, judged by the checker.

:func:`run_cell` writes a fresh input topic, starts the EOS processor (``kind="eos"``) or its
at-least-once twin (``"alo"``) through the fault proxy, injects one of :data:`FAULTS` at a known
point of its work, heals what it broke, reads the output to its end at both isolation levels and
returns the checker's :class:`~eoslab.history.Verdict`::

    cell = run_cell(cluster, "kill_txn_coordinator", "eos", records=300)
    cell.verdict.counts        # {'lost_write': 0, 'duplicate': 0, 'aborted_read': 0, ...}
    cell.notes                 # what happened, in sentences

**Where the fault lands.** A timer would land anywhere, often after the work is done. Each cell
instead arms a proxy rule on the processor's own ``client.id`` that holds (``delay_response``) or
loses (``drop_response``) the answer to its N-th request of one API (the 3rd Produce, the 2nd
EndTxn, ...): the request has reached the broker and been written, the answer has not come back,
so the processor is frozen at that point, mid-transaction, while the harness acts on it (SIGKILL,
SIGSTOP, a broker killed). This needs no cooperation from the processor's code: a learner's loop
run by :class:`~eoslab.demos.pipeline.PipelineProcess` is caught at the same point, as long as
its clients use the bootstrap servers and ``client.id`` the process is given.

**The layout.** Each cell places what its fault hits, and nothing else of the cell, on the victim
broker: the output partition's leader by replica assignment, the transaction or group coordinator
by choosing a ``transactional.id`` / ``group.id`` whose ``__transaction_state`` /
``__consumer_offsets`` partition that broker leads (``Utils.abs(hashCode) % 50``, :mod:`eoslab.inspect`).

**The timeouts every wait follows from** (each constant below says why it is what it is):
``session.timeout.ms`` = 6 s in the processors (classic group protocol, the broker's minimum): a
killed or paused member's partitions move to its successor after it. A KIP-848 group
(``group.protocol=consumer``) would keep them for the broker's ``group.consumer.session.timeout.ms``
(45 s) instead, which is why the processors use the classic protocol. ``transaction.timeout.ms`` =
20 s (10 s in ``drop_endtxn_response``); in transactional mode librdkafka derives
``socket.timeout.ms`` = ``transaction.timeout.ms`` - 100 from it (``rdkafka_conf.c``), which is how
long it waits for a lost answer before it resends the request. A killed broker is fenced after
``broker.session.timeout.ms`` = 5 s, then its partitions get new leaders.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException

from eoslab._timeouts import HEAL
from eoslab._wait import wait_until
from eoslab.demos.pipeline._parts import MODES, PipelineError, origin_of
from eoslab.demos.pipeline._plan import (
    HOLD_S,
    TRIGGERS,
    VICTIM_ROLE,
    Layout,
    Trigger,
    layout,
    write_inputs,
)
from eoslab.demos.pipeline._process import CATCH_UP, PipelineProcess
from eoslab.errors import WaitTimeout
from eoslab.faults import Fault, Proxy
from eoslab.history import Committed, Verdict, check, read_both, read_final, read_history

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

FAULTS: tuple[str, ...] = (
    "kill_processor",
    "kill_output_leader",
    "kill_txn_coordinator",
    "kill_group_coordinator",
    "drop_endtxn_response",
    "zombie",
)
"""The matrix's faults, in the order the course tells them."""

KINDS: tuple[str, ...] = MODES
"""``eos`` (outputs and input offsets in one transaction) and ``alo`` (its at-least-once twin)."""

MIN_RECORDS = 80
"""The smallest input a cell takes: four batches of 20. The trigger comes at the 2nd or 3rd request of
its kind, and work must remain after it."""

POLL_S = 0.05
"""How often the harness asks the proxy whether the trigger fired: 50 ms against HOLD_S."""
TRIGGER_WAIT = 60.0
"""Start to trigger: the processor joins its group (classic protocol, group.initial.rebalance.delay.ms
= 0: a second or two), init_transactions, then two or three batches; 60 s for a busy laptop."""
DROP_ENDTXN_TXN_TIMEOUT_MS = 10_000
"""transaction.timeout.ms of the drop_endtxn_response cell: librdkafka resends the EndTxn whose
answer was lost after socket.timeout.ms = transaction.timeout.ms - 100 = 9.9 s (the processor's own
20 s would make the cell twice as long); commit_transaction's own timeout (CLIENT_CALL, 30 s) is
longer, so librdkafka's resend completes the commit inside the call."""
ZOMBIE_WAKE = 15.0
"""A resumed zombie's next request meets the bumped epoch (EOS: _FENCED, exit 3) within a second or
two; the twin has no fence and may go on: after this it is stopped."""
STALL_S = 45.0
"""No progress for this long means the processor is stuck: each of its blocking calls has a 30 s
timeout (CLIENT_CALL), and the transaction timeout is 20 s. Seen on this cluster: librdkafka's
send_offsets_to_transaction blocked past its timeout while the group coordinator failed over
(librdkafka issue #5456)."""
SUPERVISE = 3 * CATCH_UP
"""The whole supervised catch-up: a restart (a session, 6 s), a stall (STALL_S), the work itself."""
SUPERVISE_POLL_S = 0.5
"""How often the supervisor asks the group for its lag (one consumer, a few requests)."""
MAX_RESTARTS = 3
"""A processor that exits on a fatal error is restarted by the cell (as a supervisor would), at most
this many times: more means something else is wrong."""


@dataclass(frozen=True)
class CellResult:
    """One cell of the matrix: what ran, how long, the checker's verdict, the histories it judged."""

    fault: str
    kind: str
    records: int
    seconds: float
    verdict: Verdict
    histories: tuple[Path, ...]
    notes: str
    input: str = ""
    output: str = ""

    def row(self) -> dict[str, Any]:
        """One row of the runs' ``faults`` table: the cell and every anomaly's count."""
        return {
            "fault": self.fault,
            "kind": self.kind,
            "records": self.records,
            "seconds": round(self.seconds, 2),
            "valid": self.verdict.valid(),
            **self.verdict.counts,
            "input_topic": self.input,
            "output_topic": self.output,
            "histories": len(self.histories),
            "notes": self.notes,
        }


@dataclass
class _Cell:
    """One cell's run: its cluster, proxy, layout, processes and what happened, in sentences."""

    cluster: Cluster
    proxy: Proxy
    fault: str
    kind: str
    name: str
    layout: Layout
    src: str
    out: str
    run_dir: Path
    process_kwargs: dict[str, Any]
    procs: list[PipelineProcess] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    killed: list[str] = field(default_factory=list)

    def process(self, suffix: str = "") -> PipelineProcess:
        kw: dict[str, Any] = {
            "name": self.name + suffix,
            "group": self.layout.group,
            "transactional_id": self.layout.transactional_id,
            "proxied": True,  # the trigger rules live in the fault proxy
        }
        if self.fault == "drop_endtxn_response":
            kw["transaction_timeout_ms"] = DROP_ENDTXN_TXN_TIMEOUT_MS
        kw.update(self.process_kwargs)
        p = PipelineProcess(self.cluster, self.kind, input=self.src, output=self.out, history_dir=self.run_dir, **kw)
        self.procs.append(p)
        return p

    def arm(self, p: PipelineProcess) -> tuple[Fault, Trigger]:
        """The cell's trigger on ``p``'s client.id, injected before ``p`` starts (nth counts from its first request)."""
        t = TRIGGERS[(self.fault, self.kind)]
        match: dict[str, Any] = {"api": t.api, "client_id": p.client_id, "nth": t.nth, "times": 1}
        if t.at_victim:
            match["broker"] = self.layout.victim
        if t.action == "delay_response":
            f = self.proxy.delay_response(HOLD_S, **match)
        else:
            f = self.proxy.drop_response(close=t.close, **match)
        self.faults.append(f.inject())
        return f, t

    def wait_fired(self, p: PipelineProcess, f: Fault, t: Trigger) -> None:
        def fired() -> bool:
            if not p.running:
                raise PipelineError(
                    f"The processor {p.name!r} exited ({p.returncode}) before its request #{t.nth} of {t.api}: "
                    f"{p.stderr().strip() or 'no message'}"
                )
            return f.fired >= 1

        wait_until(
            fired,
            timeout=TRIGGER_WAIT,
            what=f"processor {p.name} to send its request #{t.nth} of {t.api}",
            interval=POLL_S,
            fatal=(PipelineError,),
            progress=False,
        )
        done = sum(isinstance(e, Committed) for e in read_history(p.history()).events) if p.history().exists() else 0
        self.note(f"{t.describe()} ({done} batch(es) committed before)")

    def supervise(self, p: PipelineProcess, timeout: float = SUPERVISE) -> None:
        """Until the group committed every input, as a supervisor would: a processor that exits (fatal,
        unknown error) is restarted; one that makes no progress for STALL_S (every blocking call it
        makes has a 30 s timeout, so it is stuck) is killed and restarted. The cell says so."""
        deadline = time.monotonic() + timeout
        restarts, last_lag, since = 0, -1, time.monotonic()
        while True:
            if not p.running:
                if restarts >= MAX_RESTARTS:
                    raise PipelineError(f"The processor {p.name!r} exited {restarts + 1} times; last: {last_line(p)}")
                self.note(f"{p.name} exited {p.returncode} ({last_line(p)}); restarted")
                restarts += 1
                p.start()
                last_lag, since = -1, time.monotonic()
            try:
                lag = p.lag()
            except KafkaException:  # the group's coordinator is moving (NOT_COORDINATOR): ask again
                lag = last_lag
            if lag == 0:
                return
            now = time.monotonic()
            if lag != last_lag:
                last_lag, since = lag, now
            elif now - since > STALL_S and restarts < MAX_RESTARTS:
                self.note(f"{p.name} made no progress for {STALL_S:g} s ({lag} inputs left): killed and restarted")
                restarts += 1
                p.kill().start()
                last_lag, since = -1, time.monotonic()
            if now > deadline:
                raise PipelineError(
                    f"The processor {p.name!r} did not commit every input of {p.input} in {timeout:g} s "
                    f"({lag} left): {last_line(p)}"
                )
            time.sleep(SUPERVISE_POLL_S)

    def stop(self, p: PipelineProcess) -> None:
        rc = p.stop()
        if rc not in (0, None):
            self.note(f"{p.name} exited {rc} on SIGTERM")

    def note(self, text: str) -> None:
        self.notes.append(text)

    def retries(self) -> None:
        """Say which calls the processors retried (their stderr: ``retrying after NAME``)."""
        seen: dict[str, int] = {}
        for p in self.procs:
            for k in range(1, p.incarnation + 1):
                path = p.stderr_file(k)
                if path.exists():
                    for line in path.read_text("utf-8", "replace").splitlines():
                        if "retrying after " in line:
                            err = line.split("retrying after ", 1)[1].split(":", 1)[0]
                            seen[err] = seen.get(err, 0) + 1
        if seen:
            self.note("calls retried: " + ", ".join(f"{n}x after {e}" for e, n in sorted(seen.items())))


def last_line(p: PipelineProcess) -> str:
    """The last thing the current incarnation said on stderr (why it stopped)."""
    return (p.stderr().strip().splitlines() or ["no message"])[-1]


# -- the faults ---------------------------------------------------------------------------------


def _kill_processor(c: _Cell) -> None:
    p = c.process()
    f, t = c.arm(p)
    p.start()
    c.wait_fired(p, f, t)
    p.kill()  # SIGKILL: no abort, no commit, no leave-group
    f.heal()
    c.note(f"{p.name} SIGKILLed and restarted (assigned once its old session, 6 s, expired)")
    p.start()
    c.supervise(p)
    c.stop(p)


def _kill_broker(c: _Cell) -> None:
    p = c.process()
    f, t = c.arm(p)
    p.start()
    c.wait_fired(p, f, t)
    victim = f"broker-{c.layout.victim}"
    c.cluster.kill(victim)
    c.killed.append(victim)
    f.heal()
    role = VICTIM_ROLE[c.fault]
    if c.kind == "alo" and c.fault == "kill_txn_coordinator":
        role = "coordinator of the transactional.id the EOS processor would use: the twin has none"
    c.note(f"{victim} ({role}) SIGKILLed")
    c.supervise(p)
    c.stop(p)


def _drop_endtxn_response(c: _Cell) -> None:
    p = c.process()
    f, t = c.arm(p)
    p.start()
    c.wait_fired(p, f, t)
    c.supervise(p)
    c.stop(p)
    c.note(resent(c.proxy.trace(client_id=p.client_id, api=t.api)))


def resent(rows: list[dict[str, Any]]) -> str:
    """What the client did after the answer it lost: the same request again, how much later, answered how."""
    lost = next((i for i, r in enumerate(rows) if "dropped" in r["fate"]), None)
    if lost is None:
        return "the answer was never lost (the rule did not fire)"
    if lost + 1 >= len(rows):
        return f"no {rows[lost]['api']} after the lost answer"
    again = rows[lost + 1]
    answer = (again.get("response") or {}).get("error") or (
        "answered" if again["fate"] == "forwarded" else again["fate"]
    )
    return f"the client's next {again['api']} came {again['time'] - rows[lost]['time']:.1f} s later: {answer}"


def _zombie(c: _Cell) -> None:
    a = c.process("-a")
    f, t = c.arm(a)
    a.start()
    c.wait_fired(a, f, t)
    a.pause()  # SIGSTOP: alive, silent, its batch open
    f.heal()
    same = "group and transactional.id" if c.kind == "eos" else "group"
    c.note(f"{a.name} paused (SIGSTOP) mid-batch; {c.name}-b started with the same {same}")
    b = c.process("-b")
    b.start()
    c.supervise(b)  # B is assigned once A's session (6 s) expires; EOS: B's init_transactions fenced A
    a.resume()
    try:
        rc = a.wait_exit(ZOMBIE_WAKE)
        c.note(f"{a.name} resumed and exited {rc} ({last_line(a)})")
    except WaitTimeout:
        c.note(f"{a.name} resumed and went on (nothing fenced it): stopped after {ZOMBIE_WAKE:g} s")
        c.stop(a)
    c.supervise(b)
    c.stop(b)


_INJECT = {
    "kill_processor": _kill_processor,
    "kill_output_leader": _kill_broker,
    "kill_txn_coordinator": _kill_broker,
    "kill_group_coordinator": _kill_broker,
    "drop_endtxn_response": _drop_endtxn_response,
    "zombie": _zombie,
}


def run_cell(
    cluster: Cluster,
    fault: str,
    kind: str = "eos",
    *,
    records: int = 300,
    run_dir: Path | None = None,
    **process_kwargs: Any,
) -> CellResult:
    """Run one cell: fresh topics, the processor(s) under ``fault``, healed, the output judged.

    ``process_kwargs`` go unchanged to every :class:`PipelineProcess` the cell creates (over the
    cell's own name, group, transactional_id, proxied). ``run_dir`` gets the histories (a new
    temporary folder if ``None``). The topics stay (``CellResult.input``/``.output``) for an audit.
    """
    if fault not in FAULTS:
        raise PipelineError(f"fault={fault!r}: use one of {', '.join(FAULTS)}.")
    if kind not in KINDS:
        raise PipelineError(f"kind={kind!r}: use 'eos' (the transactional processor) or 'alo' (its twin).")
    if records < MIN_RECORDS:
        raise PipelineError(f"records={records}: a cell needs at least {MIN_RECORDS} so work remains after the fault.")
    started = time.monotonic()
    name = f"{fault}-{kind}-{uuid.uuid4().hex[:6]}".replace("_", "-")
    folder = Path(run_dir) if run_dir is not None else Path(tempfile.mkdtemp(prefix=f"eoslab-{name}-"))
    folder.mkdir(parents=True, exist_ok=True)
    plan = layout(cluster, fault, name)
    src, out = f"cell-{name}-in", f"cell-{name}-out"
    cluster.admin.create_topic(src, replica_assignment=plan.inputs)
    cluster.admin.create_topic(out, replica_assignment=plan.outputs)
    write_inputs(cluster, src, records, len(plan.inputs))
    cell = _Cell(cluster, Proxy.connect(cluster), fault, kind, name, plan, src, out, folder, dict(process_kwargs))
    try:
        _INJECT[fault](cell)
    finally:
        for p in cell.procs:
            p.kill()  # a no-op for a processor that stopped
        for f in cell.faults:
            f.heal()
        if cell.killed:
            cluster.restore(HEAL)  # the killed broker back, every ISR full, leaders preferred again
    cell.retries()
    histories = tuple(h for p in cell.procs for h in p.histories())
    verdict = check(
        histories, read_both(cluster, out), inputs=read_final(cluster, src, "read_committed"), origin=origin_of
    )
    return CellResult(
        fault, kind, records, time.monotonic() - started, verdict, histories, "; ".join(cell.notes), src, out
    )
