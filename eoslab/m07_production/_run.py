"""Run a module 07 program on the cluster under one scenario, and judge what it did.

``run_program(cluster, program, Scenario(...), run_dir=...)``: fresh input and output topics, the inputs
written (``order-0``, ``order-1``, ... round-robin over the partitions; some in an aborted transaction if the
scenario says so), the program started as ``instances`` OS processes (each its own history), restarted by a
supervisor when one exits or dies (as Kubernetes or systemd would), a fault point in the first incarnation,
then stopped once it has caught up or when the scenario's limit is reached (a stall), and judged by the
history checker with the causes it names (:func:`eoslab.history.check`).
"""

from __future__ import annotations

import builtins
import dis
import inspect
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

from eoslab import _procs
from eoslab._librdkafka import LESSONS
from eoslab._paths import clients_dir
from eoslab._timeouts import CLIENT_CALL, NODE_STOP
from eoslab.history import (
    Aborted,
    Committed,
    FinalRead,
    HistoryWriter,
    Position,
    Verdict,
    check,
    read_both,
    read_final,
    read_history,
)
from eoslab.m07_production._recorder import ProgramError, parse_die_at

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

CHILD_MODULE = "eoslab.m07_production.child"
"""A program's command line holds this: :func:`end_programs` signals nothing else."""

PROGRAM_HEADER = (
    "import time\n\nfrom confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition\n",
    ("time", "Consumer", "KafkaError", "KafkaException", "Producer", "TopicPartition"),
)
"""What a program written from a notebook can use besides builtins and its own imports (it runs in another
process): the header of the file :func:`write_program` writes, and the names it binds."""

WRITER_HISTORY = "writer.jsonl"
"""The history of the kit's input writer, beside the program's (kept where it shows which inputs aborted)."""
POLL_EVERY = 0.25
"""How often the supervisor looks at its processes: a restart follows an exit within a quarter second."""
RESTART_BACKOFF = 0.5
"""A supervisor waits this long before restarting an instance that exited (Kubernetes starts at 10 s)."""


@dataclass(frozen=True)
class Scenario:
    """What a run does to a program: how many inputs and instances, which fault, how long it may take."""

    inputs: int = 20
    partitions: int = 2
    instances: int = 1
    die_at: str | None = None
    """``after-offsets:N`` / ``after-commit:N``: the first incarnation of instance 0 SIGKILLs itself there."""
    restart: bool = True
    limit: float = 60.0
    """Seconds the run may take; a program that has not caught up by then is judged as it stands (stalled)."""
    aborted_inputs: int = 0
    """Inputs written in a transaction that aborts, between the committed ones (invisible to read_committed)."""
    topic_config: dict[str, str] = field(default_factory=dict)


@dataclass
class ProgramRun:
    """What one run of a program did, as the checker judged it."""

    name: str
    input: str
    output: str
    group: str
    verdict: Verdict
    histories: list[Path]
    exits: list[tuple[str, int]]
    stalled: bool
    seconds: float
    inputs: int

    @property
    def restarts(self) -> int:
        return len(self.exits)

    @property
    def clean(self) -> bool:
        """No anomaly, no cause, and caught up: what a right program does under its scenario."""
        return self.verdict.valid() and not self.verdict.causes and not self.stalled

    committed: int = 0
    """The program's own transactions committed (the input writer's are not counted), and aborted."""
    aborted: int = 0

    def notes(self) -> str:
        """One line: what happened, in words true on any run."""
        committed, aborted = self.committed, self.aborted
        exits = ", ".join(f"{p} exited {c}" for p, c in self.exits) or "no process exited"
        state = f"stalled: not caught up after {self.seconds:.0f} s" if self.stalled else "caught up"
        return f"{self.inputs} inputs; {committed} transactions committed, {aborted} aborted; {exits}; {state}"


def _globals_loaded(code: CodeType) -> set[str]:
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _globals_loaded(const)
    return {str(n) for n in names}


def write_program(fn: Callable[..., Any], folder: str | Path) -> str:
    """Write ``fn``'s source (a function defined in a notebook cell) to ``folder`` after
    :data:`PROGRAM_HEADER`; the ``FILE.py:function`` spec naming it. Fails, saying which, when the function
    uses a name from the notebook (it runs in another process)."""
    if not inspect.isfunction(fn):
        raise ProgramError(f"{fn!r} is not a function: pass the function itself (no parentheses).")
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        raise ProgramError(f"The source of {fn.__name__} cannot be found: define it with 'def' in a cell.") from None
    bound = PROGRAM_HEADER[1]
    unknown = sorted(n for n in _globals_loaded(fn.__code__) - set(bound) - {fn.__name__} if not hasattr(builtins, n))
    if unknown:
        raise ProgramError(
            f"{fn.__name__} uses {', '.join(unknown)} from the notebook, but it runs in another process: define or "
            f"import them inside the function (available there: {', '.join(bound)})."
        )
    return write_source(source, fn.__name__, folder)


def write_source(source: str, name: str, folder: str | Path) -> str:
    """Write a program's ``source`` (defining the function ``name``) to ``folder`` after
    :data:`PROGRAM_HEADER`; the ``FILE.py:function`` spec naming it."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"program_{name}_{uuid.uuid4().hex[:6]}.py"
    path.write_text(f'"""{name}, written by eoslab."""\n\n{PROGRAM_HEADER[0]}\n\n{source}')
    return f"{path}:{name}"


def end_programs() -> list[int]:
    """SIGKILL every program process a run started, even from a dead notebook."""
    return _procs.end_pid_files(clients_dir(), expect=CHILD_MODULE, pattern="program-*.pid")


def write_inputs(cluster: Cluster, topic: str, scenario: Scenario, history: Path) -> dict[int, int]:
    """The inputs ``order-K`` round-robin over the partitions, the aborted ones (if any) in a transaction of
    their own in the middle; the writer's history goes to ``history`` (so a poll of an aborted input is an
    aborted read). The next offset after the last committed input, per partition."""
    from confluent_kafka import Producer

    tid = f"{topic}-writer"
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers(), "transactional.id": tid, "logger": LESSONS})
    p.init_transactions(CLIENT_CALL)
    ends: dict[int, int] = {}
    half = scenario.inputs // 2
    with HistoryWriter(history, process="writer") as h:
        batches = [(0, half, True), (0, scenario.aborted_inputs, False), (half, scenario.inputs, True)]
        txn = 0
        for start, stop, commit in batches:
            if stop <= start:
                continue
            txn += 1
            p.begin_transaction()
            for k in range(start, stop):
                value = f"order-{k}" if commit else f"cancelled-{k}"

                def report(err: Any, msg: Any, txn: int = txn, commit: bool = commit) -> None:
                    h.delivered(err, msg, source=None, txn=txn, transactional_id=tid)
                    if err is None and commit:
                        ends[msg.partition()] = max(ends.get(msg.partition(), 0), msg.offset() + 1)

                p.produce(topic, value=value.encode(), key=value.encode(), partition=k % scenario.partitions,
                          on_delivery=report)  # fmt: skip
            p.flush(CLIENT_CALL)
            if commit:
                p.commit_transaction(CLIENT_CALL)
                h.committed(txn, (), transactional_id=tid)
            else:
                p.abort_transaction(CLIENT_CALL)
                h.aborted(txn, "the writer cancelled these orders", transactional_id=tid)
    return ends


class _Instance:
    """One instance of the program across its incarnations, restarted by the supervisor."""

    def __init__(self, run: _Run, index: int) -> None:
        self.run, self.index, self.incarnation = run, index, 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.exited_at = 0.0

    def start(self, die_at: str | None) -> None:
        self.incarnation += 1
        r = self.run
        name = f"{r.name}-{self.index}.{self.incarnation}"
        cmd = [
            sys.executable, "-m", CHILD_MODULE, "--program", r.spec, "--bootstrap", r.cluster.bootstrap_servers(),
            "--input", r.input, "--output", r.output, "--group", r.group, "--instance", str(self.index),
            "--history", str(r.folder / f"{name}.jsonl"), "--process", name,
        ]  # fmt: skip
        if die_at:
            cmd += ["--die-at", die_at]
        with (r.folder / f"{name}.stderr").open("wb") as err:
            self.proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
        _procs.write_pid(clients_dir() / f"program-{self.proc.pid}.pid", self.proc.pid)
        _procs.adopt(self.proc.pid)

    def reap(self) -> int | None:
        """The exit code if the current incarnation has ended (reaped once), else None."""
        if self.proc is None or self.proc.poll() is None:
            return None
        code = self.proc.returncode
        (clients_dir() / f"program-{self.proc.pid}.pid").unlink(missing_ok=True)
        _procs.release(self.proc.pid)
        self.proc = None
        self.exited_at = time.monotonic()
        return code

    def stop(self) -> None:
        live = _procs.process(self.proc.pid) if self.proc is not None else None
        if live is not None:
            _procs.terminate([live], NODE_STOP)
        self.reap()


@dataclass
class _Run:
    cluster: Cluster
    spec: str
    name: str
    input: str
    output: str
    group: str
    folder: Path


def _caught_up(cluster: Cluster, run: _Run, ends: dict[int, int]) -> bool:
    """The group's committed offsets (without RequireStable: outside any open transaction) reach past every
    committed input, and no transaction is open on the output (its LSO is its high watermark)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition

    from eoslab.inspect import offsets

    tps = [TopicPartition(run.input, p) for p in ends]
    try:
        fut = cluster.admin.client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(run.group, tps)])
        held = {tp.partition: tp.offset for tp in fut[run.group].result(timeout=10).topic_partitions or []}
    except KafkaException:
        return False
    if any(held.get(p, -1) < end for p, end in ends.items()):
        return False
    return all(o.open_gap == 0 for o in offsets(cluster, run.output))


def origins(inputs: FinalRead) -> Callable[[str | None], Position | None]:
    """The input an output value was made from: the programs write an order's value (``order-7``), or it in
    capitals (``ORDER-7``); ``None`` for a value no input has."""
    table: dict[str, Position] = {}
    for r in inputs.records:
        if r.value is not None:
            table[r.value] = inputs.at(r)
            table[r.value.upper()] = inputs.at(r)
    return lambda value: table.get(value or "")


def run_program(
    cluster: Cluster, program: Callable[..., Any] | str, scenario: Scenario, *, run_dir: str | Path, name: str = "p7"
) -> ProgramRun:
    """Run ``program`` (a function, or a ``FILE.py:function`` spec) under ``scenario`` and judge it."""
    folder = Path(run_dir) / f"{name}-{uuid.uuid4().hex[:6]}"
    folder.mkdir(parents=True)
    spec = program if isinstance(program, str) else write_program(program, folder)
    parse_die_at(scenario.die_at)
    run = _Run(cluster, spec, name, f"{folder.name}-in", f"{folder.name}-out", f"{folder.name}-group", folder)
    for topic in (run.input, run.output):
        cluster.admin.create_topic(topic, partitions=scenario.partitions, config=scenario.topic_config or None)
    ends = write_inputs(cluster, run.input, scenario, folder / WRITER_HISTORY)
    instances = [_Instance(run, i) for i in range(scenario.instances)]
    exits: list[tuple[str, int]] = []
    t0 = time.monotonic()
    try:
        for inst in instances:
            inst.start(scenario.die_at if inst.index == 0 else None)
        stalled = _supervise(cluster, run, instances, scenario, ends, exits, t0)
    finally:
        for inst in instances:
            inst.stop()
    return _judge(run, scenario, exits, stalled, time.monotonic() - t0)


def _transactions_ended(histories: list[Path]) -> tuple[int, int]:
    """The transactions the histories committed, and those they aborted."""
    events = [e for h in histories for e in read_history(h).events]
    committed = sum(1 for e in events if isinstance(e, Committed) and e.txn is not None)
    return committed, sum(1 for e in events if isinstance(e, Aborted))


def _judge(run: _Run, scenario: Scenario, exits: list[tuple[str, int]], stalled: bool, seconds: float) -> ProgramRun:
    """The final reads (kept beside the histories: the run can be judged again without the cluster), the
    checker's verdict, the program's own transactions; the topics deleted."""
    cluster, folder = run.cluster, run.folder
    inputs = read_final(cluster, run.input, "read_committed")
    # the writer's history only where it matters: a poll of an aborted input is then an aborted read
    histories = sorted(h for h in folder.glob("*.jsonl") if h.name != WRITER_HISTORY or scenario.aborted_inputs)
    reads = read_both(cluster, run.output)
    for read in (*reads, inputs):
        read.save(folder / f"{'output' if read.topic == run.output else 'input'}-{read.isolation}.json")
    verdict = check(histories, reads, inputs=inputs, origin=origins(inputs))
    for topic in (run.input, run.output):
        cluster.admin.delete_topic(topic)
    committed, aborted = _transactions_ended([h for h in histories if h.name != WRITER_HISTORY])
    return ProgramRun(run.name, run.input, run.output, run.group, verdict, histories, exits, stalled, seconds,
                      len(inputs.records), committed, aborted)  # fmt: skip


def _supervise(
    cluster: Cluster,
    run: _Run,
    instances: list[_Instance],
    scenario: Scenario,
    ends: dict[int, int],
    exits: list[tuple[str, int]],
    t0: float,
) -> bool:
    """Restart what exits, until the program caught up (False) or the limit passed (True: a stall)."""
    next_check = 0.0
    while time.monotonic() - t0 < scenario.limit:
        for inst in instances:
            code = inst.reap()
            if code is not None:
                exits.append((f"{run.name}-{inst.index}.{inst.incarnation}", code))
            if inst.proc is None and scenario.restart and time.monotonic() - inst.exited_at >= RESTART_BACKOFF:
                inst.start(None)
        if time.monotonic() >= next_check:
            if _caught_up(cluster, run, ends):
                return False
            next_check = time.monotonic() + 1.0
        time.sleep(POLL_EVERY)
    return True
