"""One fault-matrix cell's run: the processes it starts, the trigger it arms on them, the supervisor that
sees them through, and what happened, in sentences. :mod:`eoslab.demos.pipeline._faults` says which fault
does what with it and why the timeouts below are what they are."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException

from eoslab._wait import wait_until
from eoslab.demos.pipeline._parts import PipelineError
from eoslab.demos.pipeline._plan import HOLD_S, TRIGGERS, Layout, Trigger
from eoslab.demos.pipeline._process import CATCH_UP, PipelineProcess
from eoslab.errors import WaitTimeout
from eoslab.faults import Fault, Proxy
from eoslab.history import Committed, read_history

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

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
STALL_S = 45.0
"""No progress for this long means the processor is stuck: its blocking calls time out within 30 s
(CLIENT_CALL, which librdkafka caps at the 20 s transaction timeout), and the one that can block for ever,
send_offsets_to_transaction (librdkafka issues #5511, #5456), exits the processor 5 s past its 10 s timeout
(pipeline/_watchdog.py). A backstop: the watchdog's exit is seen, and restarted, first."""
SUPERVISE = 3 * CATCH_UP
"""The whole supervised catch-up: a restart (a session, 6 s), a stall (STALL_S), the work itself."""
SUPERVISE_POLL_S = 0.5
"""How often the supervisor asks the group for its lag (one consumer, a few requests)."""
GROUP_LIST_S = 30.0
"""ListGroups after a cell, until the group is listed: a group coordinator restarted by the cell (and made leader
again by the heal) lists it once it has loaded its offsets partition; 30 s for a busy laptop."""
MAX_RESTARTS = 3
"""A processor that exits on a fatal error is restarted by the cell (as a supervisor would), at most
this many times: more means something else is wrong."""


@dataclass
class Cell:
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
        unknown error, a call stuck past its timeout) is restarted; one that makes no progress for STALL_S
        is killed and restarted. The cell says so."""
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

    def group_type(self) -> None:
        """Say which protocol the group spoke, as the group coordinator lists it (ListGroups: CLASSIC or CONSUMER,
        KIP-848): the evidence that a KIP-848 cell's processors really ran in a KIP-848 group. A coordinator that
        was just restarted lists the group once it has loaded its ``__consumer_offsets`` partition: asked again
        until then."""

        def listed() -> str | None:
            try:
                found = self.cluster.admin.client.list_consumer_groups(request_timeout=GROUP_LIST_S).result()
            except KafkaException:
                return None  # a coordinator still loading: ask again
            return next((g.type.name for g in found.valid if g.group_id == self.layout.group), None)

        try:
            kind = wait_until(listed, timeout=GROUP_LIST_S, what=f"group {self.layout.group} listed", progress=False)
        except WaitTimeout:
            kind = "not listed"
        self.note(f"group {self.layout.group}: type {kind}")

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
