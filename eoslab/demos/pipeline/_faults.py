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

**The timeouts every wait follows from** (each constant here and in ``_cell`` says why it is what it is):
``session.timeout.ms`` = 6 s in the processors (classic group protocol, the broker's minimum): a
killed or paused member's partitions move to its successor after it. A KIP-848 group
(``group.protocol=consumer``, ``run_cell(..., group_protocol="consumer")``) has no such client setting:
the broker's ``group.consumer.session.timeout.ms`` applies, 45 s by default and 6 s on the course
cluster (``eoslab.topology``), so both protocols' cells wait out the same session. ``transaction.timeout.ms`` =
20 s (10 s in ``drop_endtxn_response``); in transactional mode librdkafka derives
``socket.timeout.ms`` = ``transaction.timeout.ms`` - 100 from it (``rdkafka_conf.c``), which is how
long it waits for a lost answer before it resends the request. A killed broker is fenced after
``broker.session.timeout.ms`` = 5 s, then its partitions get new leaders.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab._timeouts import HEAL
from eoslab.demos.pipeline._cell import Cell, last_line
from eoslab.demos.pipeline._parts import MODES, PipelineError, origin_of
from eoslab.demos.pipeline._plan import VICTIM_ROLE, layout, write_inputs
from eoslab.errors import WaitTimeout
from eoslab.faults import Proxy
from eoslab.history import Verdict, check, read_both, read_final

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
ZOMBIE_WAKE = 15.0
"""A resumed zombie's next request meets the bumped epoch (EOS: _FENCED, exit 3) within a second or
two; the twin has no fence and may go on: after this it is stopped."""


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
    group_protocol: str = "classic"

    def row(self) -> dict[str, Any]:
        """One row of the runs' ``faults`` table: the cell and every anomaly's count."""
        return {
            "fault": self.fault,
            "kind": self.kind,
            "group_protocol": self.group_protocol,
            "records": self.records,
            "seconds": round(self.seconds, 2),
            "valid": self.verdict.valid(),
            **self.verdict.counts,
            "input_topic": self.input,
            "output_topic": self.output,
            "histories": len(self.histories),
            "notes": self.notes,
        }


# -- the faults ---------------------------------------------------------------------------------


def _kill_processor(c: Cell) -> None:
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


def _kill_broker(c: Cell) -> None:
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


def _drop_endtxn_response(c: Cell) -> None:
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


def _zombie(c: Cell) -> None:
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
    cell's own name, group, transactional_id, proxied); ``group_protocol="consumer"`` runs the cell's
    processors in a KIP-848 group. ``run_dir`` gets the histories (a new
    temporary folder if ``None``). The topics stay (``CellResult.input``/``.output``) for an audit.
    """
    if fault not in FAULTS:
        raise PipelineError(f"fault={fault!r}: use one of {', '.join(FAULTS)}.")
    if kind not in KINDS:
        raise PipelineError(f"kind={kind!r}: use 'eos' (the transactional processor) or 'alo' (its twin).")
    if records < MIN_RECORDS:
        raise PipelineError(f"records={records}: a cell needs at least {MIN_RECORDS} so work remains after the fault.")
    started = time.monotonic()
    protocol = str(process_kwargs.get("group_protocol", "classic"))
    tag = "" if protocol == "classic" else "-kip848"
    name = f"{fault}-{kind}{tag}-{uuid.uuid4().hex[:6]}".replace("_", "-")
    folder = Path(run_dir) if run_dir is not None else Path(tempfile.mkdtemp(prefix=f"eoslab-{name}-"))
    folder.mkdir(parents=True, exist_ok=True)
    plan = layout(cluster, fault, name)
    src, out = f"cell-{name}-in", f"cell-{name}-out"
    cluster.admin.create_topic(src, replica_assignment=plan.inputs)
    cluster.admin.create_topic(out, replica_assignment=plan.outputs)
    write_inputs(cluster, src, records, len(plan.inputs))
    cell = Cell(cluster, Proxy.connect(cluster), fault, kind, name, plan, src, out, folder, dict(process_kwargs))
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
    cell.group_type()
    histories = tuple(h for p in cell.procs for h in p.histories())
    verdict = check(
        histories, read_both(cluster, out), inputs=read_final(cluster, src, "read_committed"), origin=origin_of
    )
    seconds = time.monotonic() - started
    return CellResult(fault, kind, records, seconds, verdict, histories, "; ".join(cell.notes), src, out, protocol)
