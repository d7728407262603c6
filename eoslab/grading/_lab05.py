"""Lab 05's fault cells: the learner's processor loop run as the pipeline's OS process, under one fault
at a time, then judged by the history checker.

A :class:`Cell` owns one scenario's topics (fresh names, a random number of random inputs), the
processes it starts (:class:`eoslab.demos.pipeline.PipelineProcess` with ``loop=``) and their history
files; :meth:`Cell.judge` reads the output at both isolation levels and the input with
``read_committed`` and returns the checker's verdict with what else the run showed (plain offset
commits, processes that went on after being fenced, group errors).

The scenarios built here are the ones the fault matrix has no cell for: an abortable error the
cluster really returns (an output the topic refuses, until its limit is raised), and a processor
paused in the middle of a transaction while another member of its group, or a successor with its
transactional.id, takes its partitions over.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eoslab._librdkafka import KIT
from eoslab._wait import wait_until
from eoslab.clients import producer, write_all
from eoslab.cluster import Cluster
from eoslab.demos.pipeline import FENCED_EVENT, PipelineProcess, origin_of
from eoslab.errors import ClientError, GradingError
from eoslab.history import (
    Aborted,
    Assigned,
    Committed,
    HistoryWriter,
    Polled,
    Verdict,
    check,
    read_both,
    read_final,
    read_history,
)

ASSIGNMENT = [[1, 2, 3], [2, 3, 1]]
"""Input and output: two partitions led by brokers 1 and 2, so two group members get one each."""

SMALL_MESSAGE_BYTES = 4096
"""The output topic's ``max.message.bytes`` in the abort cell: a batch of 20 ordinary outputs (about
2 KB) fits, the poison input's output (:data:`POISON_BYTES` more) does not, so the broker answers
that Produce with MESSAGE_TOO_LARGE (10) and librdkafka makes the transaction abortable."""
POISON_BYTES = 6000
RAISED_MESSAGE_BYTES = 1048588
"""Kafka's default ``max.message.bytes``, set once the processor has aborted: the poison then goes through."""

SETTLE = 45.0
"""A cell's processors must commit every input within this: a restart waits for the dead member's
session to expire (session.timeout.ms = 6 s), a paused member's successor as long, then a hundred
records take seconds; the rest is room for a shared machine."""
GROUP_ABORTS = 4
"""Aborts on a group error (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) per process after which a cell stops
waiting: a processor that keeps sending old group metadata aborts every transaction, forever."""
GROUP_ERRORS = ("ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID")


class CellFailed(GradingError):
    """The loop did not get through a cell: the sentence says what the processes did."""


@dataclass
class Outcome:
    """What a cell showed: the checker's verdict and the evidence the hints are drawn from."""

    cell: str
    verdict: Verdict
    inputs: int
    plain_commits: int = 0
    """Offset commits outside any transaction (``consumer.commit``)."""
    fenced_then_committed: list[str] = field(default_factory=list)
    """Processes that committed a transaction after one of their calls raised _FENCED (or a fatal error)."""
    group_aborts: int = 0
    """Transactions aborted on a group error (the metadata's generation or member id was stale)."""
    offsets_behind: list[str] = field(default_factory=list)
    """Commits whose offset for a partition is not past the last input polled from it in that batch
    (a committed offset is the NEXT one to read: the last record's offset + 1)."""
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The settings the learner's loop gave its clients (``consumer``, ``producer``), as the processes saved them."""

    @property
    def clean(self) -> bool:
        return self.verdict.valid() and not self.fenced_then_committed


def offsets_behind(histories: list[Path]) -> list[str]:
    """Sentences for the commits that left a partition's offset at or before the last record of it
    their batch polled (the committed offset is the next one to read)."""
    found = []
    for h in histories:
        polled: dict[tuple[str, int], int] = {}
        for e in read_history(h).events:
            if isinstance(e, Polled):
                tp = (e.at.topic, e.at.partition)
                polled[tp] = max(polled.get(tp, -1), e.at.offset)
            elif isinstance(e, Committed):
                found += [
                    f"{e.process} committed offset {o.offset} for {o.topic}[{o.partition}] after its batch polled "
                    f"offset {polled[(o.topic, o.partition)]} there: that record is read again"
                    for o in e.offsets
                    if o.offset <= polled.get((o.topic, o.partition), -1)
                ]
                polled = {}
            elif isinstance(e, (Aborted, Assigned)):
                polled = {}
    return found


OFFSETLESS = "without their inputs' offsets"
"""The phrase of :func:`offsetless_commits`' sentence, which the checks map to their hint."""


def offsetless_commits(history: Path) -> str | None:
    """A sentence when a process committed at least two transactions that carried no input offsets and
    committed no offsets outside them either: it marks no input done, so every restart, successor and
    new owner reads them all again, and its group never catches up. (One such commit alone may be the
    moment between ``commit_transaction()`` and a plain ``consumer.commit()``: another check's case.)"""
    if not history.exists():
        return None
    events = read_history(history).events
    commits = [e for e in events if isinstance(e, Committed)]
    bare = [e for e in commits if e.txn is not None and not e.offsets]
    if len(bare) < 2 or any(e.txn is None for e in commits):
        return None
    return (
        f"{bare[0].process} committed {len(bare)} transactions {OFFSETLESS} (no send_offsets_to_transaction before "
        "commit_transaction): nothing marks those inputs done, so they are read again"
    )


def fenced_at(history: Path) -> float | None:
    """When a process first saw _FENCED (or a fatal error), from the :data:`FENCED_EVENT` lines of its stderr."""
    err = history.with_suffix(".stderr")
    if not err.exists():
        return None
    text = err.read_text("utf-8", "replace")
    times = [float(m.group(1)) for m in re.finditer(rf"^{FENCED_EVENT} ([0-9.]+)", text, re.M)]
    return min(times) if times else None


def fenced_then_committed(histories: list[Path]) -> list[str]:
    """The histories whose process committed a transaction after it was fenced."""
    out = []
    for h in histories:
        fenced = fenced_at(h)
        if fenced is not None and any(
            isinstance(e, Committed) and e.txn is not None and e.time > fenced for e in read_history(h).events
        ):
            out.append(h.stem)
    return out


def skipped_after_abort(histories: list[Path]) -> list[str]:
    """Sentences for each first poll after an abort that landed past the committed offset: the aborted
    batch's inputs were skipped (a processor that rewinds polls them again first). The topics are
    fresh, so a partition without a committed offset starts at 0."""
    found = []
    for h in histories:
        committed: dict[tuple[str, int], int] = {}
        after_abort: set[tuple[str, int]] | None = None
        txn = None
        for e in read_history(h).events:
            if isinstance(e, (Assigned, Committed)):
                committed.update({(o.topic, o.partition): o.offset for o in e.offsets})
                if isinstance(e, Assigned):
                    after_abort = None  # a new assignment starts from the committed offsets anyway
            elif isinstance(e, Aborted):
                after_abort, txn = set(), e.txn
            elif isinstance(e, Polled) and after_abort is not None:
                tp = (e.at.topic, e.at.partition)
                if tp not in after_abort:
                    after_abort.add(tp)
                    if e.at.offset > committed.get(tp, 0):
                        found.append(
                            f"after aborting txn {txn}, {e.process} polled {e.at} next, past the committed offset "
                            f"{committed.get(tp, 0)}: inputs {committed.get(tp, 0)}..{e.at.offset - 1} of {tp[0]}"
                            f"[{tp[1]}] were skipped"
                        )
    return found


def tail(p: PipelineProcess) -> str:
    """The last thing a process said on stderr (its reason to stop), not librdkafka's own log lines
    (``%4|...``) nor the pipe's events."""
    lines = [line.strip() for line in p.stderr().splitlines() if line.strip()]
    said = [line for line in lines if not re.match(r"%\d\|", line) and not line.startswith(FENCED_EVENT)]
    if said:
        return said[-1]
    if p.returncode == 0:
        return "it said nothing: run(pipe) returned"
    return lines[-1] if lines else "nothing on stderr"  # still running (or killed): librdkafka's last word


def wait_paused(p: PipelineProcess, spec: str) -> None:
    """Until ``p`` (started with ``pause_at=spec``) stopped itself there; a sentence if it never does."""
    try:
        p.wait_paused()
    except Exception as e:  # it exited, or never sent that batch
        n = spec.split(":")[1]
        if not p.running:
            raise CellFailed(
                f"your processor stopped by itself (exit {p.returncode}) before batch {n} ({tail(p)})"
            ) from e
        raise CellFailed(f"your processor did not send batch {n} within 30 s ({tail(p)})") from e


class Cell:
    """One scenario: fresh topics, inputs, processes running ``loop``, and the verdict."""

    def __init__(self, cluster: Cluster, name: str, loop: str, folder: Path) -> None:
        self.cluster, self.name, self.loop = cluster, name, loop
        self.run = uuid.uuid4().hex[:6]
        self.input, self.output = f"lab05-{name}-in-{self.run}", f"lab05-{name}-out-{self.run}"
        self.folder = folder / f"{name}-{self.run}"
        self.inputs = 0
        self.procs: list[PipelineProcess] = []
        self.ends: dict[int, int] = {}
        """Per input partition, the offset after its last data record (a marker may follow it): where done is."""
        self.writers: list[Path] = []
        """Histories of the cell's own transactional input writers (:meth:`seed_aborted`), judged with the rest."""

    def topics(self, output_config: dict[str, str] | None = None) -> None:
        self.cluster.admin.create_topic(self.input, replica_assignment=ASSIGNMENT)
        self.cluster.admin.create_topic(self.output, replica_assignment=ASSIGNMENT, config=output_config)

    def seed(self, n: int, *, poison: frozenset[int] = frozenset()) -> None:
        """``n`` more random inputs over both partitions; those numbered in ``poison`` are too big for
        :data:`SMALL_MESSAGE_BYTES`."""
        records = []
        for i in range(self.inputs, self.inputs + n):
            value = f"v{i}-{random.randint(0, 10**6)}" + ("-" + "x" * POISON_BYTES if i in poison else "")
            records.append({"value": value.encode(), "key": str(i).encode(), "partition": i % len(ASSIGNMENT)})
        try:
            written = write_all(producer(self.cluster), self.input, records)
        except ClientError as e:
            raise CellFailed(f"the lab's inputs were not written: {e}") from None
        for partition, offset in written:
            self.ends[partition] = max(self.ends.get(partition, 0), offset + 1)
        self.inputs += n

    def seed_aborted(self, n: int) -> None:
        """``n`` inputs in one transaction that the cell aborts, recorded in a history of their own: a processor
        that reads them (``isolation.level=read_uncommitted``) polls what its writer aborted, an aborted read."""
        from confluent_kafka import Producer

        tid = f"lab05-{self.name}-writer-{self.run}"
        path = self.folder / f"input-writer-{self.run}.jsonl"
        p = Producer({"bootstrap.servers": self.cluster.bootstrap_servers(), "transactional.id": tid, "logger": KIT})
        with HistoryWriter(path, process=f"input-writer-{self.run}") as h:
            p.init_transactions(30)
            p.begin_transaction()
            for i in range(n):
                p.produce(
                    self.input, value=f"aborted-{i}-{random.randint(0, 10**6)}".encode(), key=str(i).encode(),
                    partition=i % len(ASSIGNMENT), on_delivery=lambda err, msg: h.delivered(err, msg, source=None,
                    txn=1, transactional_id=tid),
                )  # fmt: skip
            if p.flush(30) != 0:
                raise CellFailed(f"the aborted inputs of {self.input} were not acknowledged in 30 s: is it healthy?")
            p.abort_transaction(30)
            h.aborted(1, "the lab's input writer aborts it: read_committed never returns these inputs", tid)
        self.writers.append(path)

    def settings(self) -> dict[str, dict[str, Any]]:
        """What the loop's clients were made with (the last incarnation that saved them)."""
        out: dict[str, dict[str, Any]] = {}
        for h in self.histories():
            path = h.with_suffix(".settings.json")
            if path.exists():
                out.update(json.loads(path.read_text()))
        return out

    def process(self, label: str, **kw: Any) -> PipelineProcess:
        p = PipelineProcess(
            self.cluster, "eos", input=self.input, output=self.output, history_dir=self.folder,
            name=f"l05-{self.name}-{label}-{self.run}", loop=self.loop, **kw,
        )  # fmt: skip
        self.procs.append(p)
        return p

    def histories(self) -> list[Path]:
        return [h for p in self.procs for h in p.histories()]

    def events(self) -> list[Any]:
        return [e for h in self.histories() for e in read_history(h).events]

    def group_aborts(self) -> int:
        return sum(isinstance(e, Aborted) and any(g in e.reason for g in GROUP_ERRORS) for e in self.events())

    def settle(self, watch: PipelineProcess, timeout: float = SETTLE) -> None:
        """Until the group committed every input; a clear failure as soon as the processes cannot get there."""

        def done() -> bool:
            if not watch.running:
                raise CellFailed(f"your processor stopped (exit {watch.returncode}) before it was done: {tail(watch)}")
            if self.group_aborts() >= GROUP_ABORTS * len(self.procs):
                raise CellFailed(
                    f"your processors aborted {self.group_aborts()} transactions on ILLEGAL_GENERATION or "
                    "UNKNOWN_MEMBER_ID: the group moved on, and the group metadata sent with the offsets is stale"
                )
            if went_on := fenced_then_committed(self.histories()):
                raise CellFailed(f"{went_on[0]} committed a transaction after it was fenced (_FENCED)")
            if skipped := skipped_after_abort(self.histories()):
                raise CellFailed(skipped[0])
            if behind := offsets_behind(self.histories()):
                raise CellFailed(behind[0])
            if bare := offsetless_commits(watch.history()):
                raise CellFailed(bare)
            return watch.lag(self.ends) == 0

        try:
            wait_until(done, timeout=timeout, what=f"cell {self.name}: every input committed", fatal=(CellFailed,))
        except CellFailed:
            raise
        except Exception as e:  # the wait's own timeout, said in the learner's terms
            raise CellFailed(
                f"the group had not committed every input after {timeout:.0f} s ({watch.lag(self.ends)} left): your "
                f"processor stopped making progress (its last words: {tail(watch)})"
            ) from e

    def judge(self) -> Outcome:
        for p in self.procs:
            p.resume().stop()
        hist = self.histories()
        verdict = check(
            [*hist, *self.writers],
            read_both(self.cluster, self.output),
            inputs=read_final(self.cluster, self.input, "read_committed"),
            origin=origin_of,  # an output whose delivery report died with its process: its value names its input
        )
        plain = sum(isinstance(e, Committed) and e.txn is None for e in self.events())
        return Outcome(
            self.name,
            verdict,
            self.inputs,
            plain,
            fenced_then_committed(hist),
            self.group_aborts(),
            offsets_behind(hist),
            self.settings(),
        )

    def close(self) -> None:
        for p in self.procs:
            p.kill()
        for t in (self.input, self.output):
            try:
                self.cluster.admin.delete_topic(t)
            except Exception:  # noqa: BLE001 - a topic left behind costs nothing; the verdict matters
                pass


@contextmanager
def cell(cluster: Cluster, name: str, loop: str, folder: Path) -> Iterator[Cell]:
    c = Cell(cluster, name, loop, folder)
    try:
        yield c
    finally:
        c.close()


@contextmanager
def workdir() -> Iterator[Path]:
    """Where a check writes the loop's file and the cells' histories (removed afterwards)."""
    path = Path(tempfile.mkdtemp(prefix="eoslab-lab05-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
