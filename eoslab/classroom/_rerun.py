"""The class rerun: every (learner, lab) notebook graded by the instructor's kit, in parallel, resumably.

Run one after the other, 30 learners x 6 labs at 1.5-5 min each is a working day. Here a pool of
``workers`` processes each grades one notebook at a time through :func:`grade_notebook`. By default each
worker grades on a cluster of its own (:mod:`eoslab.classroom._clusters`: the instructor's and N-1 started for
the run), scheduled by :func:`pick_slots`: only lab 06 without runs, a benchmark, has the machine to itself.
With ``--one-cluster`` they all grade on the instructor's cluster, scheduled by :func:`pick`: that is safe
only for labs that cannot disturb one another, and most can (see :data:`ALONE`): those run alone, one at a
time, while the others share the cluster.

Every result is appended to ``gradebook.jsonl`` the moment it arrives (one line, one ``write``,
fsynced; a torn last line from a crash is dropped on the next start), keyed by learner, notebook
and the notebook's sha256. A run killed halfway, by Ctrl-C or SIGKILL, loses only the notebooks in
flight; the same command again grades only what the journal lacks, and a notebook that changed
since (another sha256) is graded again. Workers stop their notebooks when the run is interrupted
and when its process dies (they watch their parent), so no grading goes on behind the instructor.
The gradebook (CSV) is a view of the journal, rewritten after each line and whenever a run stops; only a
SIGKILL between a line and that rewrite leaves it one notebook behind, until the next run rewrites it
from the journal before grading anything.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from eoslab.classroom._trusted import default_course, trusted_copy
from eoslab.errors import EoslabError, GradingError
from eoslab.labcheck import Report, grade_notebook, stop_nbval_runs

SHARED: dict[str, str] = {
    "lab04": "writes random transactions to fresh topics of its own and reads them back; breaks no node, "
    "sets no proxy rule, moves no leader",
    "lab06": "reads the learner's own runs with Spark; the cluster only answers its Setup cell's heal",
}
"""Labs that may share the cluster with any other shared lab, and why (checked in ``eoslab/grading/``)."""

ALONE: dict[str, str] = {
    "setup": "every lab's Setup cell calls eoslab.heal(cluster), which deletes EVERY fault-proxy rule, ends "
    "every zombie and Java producer and moves leaders back to their preferred replicas, whoever set them",
    "lab01": "kills a broker and heals (task 3); drops Produce answers through proxy rules (tasks 1, 2, 5)",
    "lab02": "restarts broker 3 (task 4) and predicts producer-id blocks, which every producer on the cluster "
    "draws from",
    "lab03": "moves the leaders of partitions 0 and 48 of __transaction_state and __consumer_offsets (task 1); "
    "delays EndTxn and drops Produce through proxy rules (tasks 4, 5)",
    "lab05": "holds and drops answers through proxy rules on its processors (task 2), which a lab starting "
    "meanwhile would delete",
    "lab06 without runs": "measures the quick matrix first: a benchmark, disturbed by anything beside it",
    "any other lab": "not checked: alone, to be safe",
}
"""Labs that run alone on the cluster, and what they do that another lab would disturb or suffer from."""

JOURNAL = "gradebook.jsonl"
STOP_POLL_S = 0.5
"""How often a worker looks at its parent and at the stop flag: a stopped run stops its notebooks within this."""


LAB_SECONDS: dict[str, float] = {"lab01": 18, "lab02": 18, "lab03": 25, "lab04": 21, "lab05": 74, "lab06": 25}
"""Seconds a solution takes to grade alone on a quiet cluster (docs/instructor.md, "Measured grading figures", one
worker; lab 06 on the learner's runs): on clusters of their own the longest go first, so no 75 s notebook is left
for the end."""

SPARK_AT_ONCE = max(1, (os.cpu_count() or 2) // 4)
"""How many notebooks that start a Spark session (lab 06 on the learner's runs) grade at once on clusters of
their own: a session's start (a JVM, its jars) wants two cores for ~20 s, and two of them beside two clusters on a
2-core machine took 49-58 s each instead of 25 (docs/instructor.md). One per 4 cores; another lab takes the slot
meanwhile."""


def _lab(notebook: str) -> str:
    m = re.match(r"(lab\d+)", notebook)
    return m.group(1) if m else ""


def runs_alone(notebook: str, runs: Path | None) -> bool:
    """Must this lab have the cluster to itself? (:data:`SHARED`, :data:`ALONE`)"""
    lab = _lab(notebook)
    if lab == "lab06":
        return runs is None
    return lab not in SHARED


@dataclass(frozen=True)
class Job:
    """One notebook to grade: whose, where (its copy in the work folder), its sha256, the learner's runs,
    and the course whose labs its check cells are taken from (:mod:`eoslab.classroom._trusted`)."""

    learner: str
    notebook: Path
    sha256: str
    runs: Path | None
    alone: bool
    course: Path | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.learner, self.notebook.name, self.sha256)

    @classmethod
    def of(cls, learner: str, notebook: Path, runs: Path | None, course: Path | None = None) -> Job:
        sha = hashlib.sha256(notebook.read_bytes()).hexdigest()
        return cls(learner, notebook, sha, runs, runs_alone(notebook.name, runs), course)


def uses_spark(job: Job) -> bool:
    """Does this lab start a Spark session while it grades (lab 06 on the learner's runs)?"""
    return _lab(job.notebook.name) == "lab06" and job.runs is not None


def pick(pending: list[Job], running: list[Job], workers: int, spark_at_once: int = SPARK_AT_ONCE) -> list[Job]:
    """The jobs to start now: shared ones up to ``workers`` at a time; one that runs alone only on an
    idle cluster, and nothing beside it. Taken in order (the jobs behind one that waits for the cluster
    wait too), so a lab that runs alone is never starved by a stream of shared ones; but a job that
    :func:`uses_spark` waits while ``spark_at_once`` such jobs run, and the next shared job goes first."""
    if any(j.alone for j in running):
        return []
    sparks = sum(uses_spark(j) for j in running)
    chosen: list[Job] = []
    for job in pending:
        if len(running) + len(chosen) >= workers:
            break
        if job.alone:
            return [job] if not running and not chosen else chosen
        if uses_spark(job):
            if sparks >= spark_at_once:
                continue
            sparks += 1
        chosen.append(job)
    return chosen


def order(jobs: list[Job]) -> list[Job]:
    """Shared labs first (they overlap), then those that run alone; by learner and lab within each."""
    return sorted(jobs, key=lambda j: (j.alone, j.learner, j.notebook.name))


# -- clusters of their own: one notebook on each at a time ------------------------------------------------


def machine_alone(job: Job) -> bool:
    """Must this lab have the machine to itself? Lab 06 without the learner's runs measures the quick matrix
    first: a benchmark, disturbed by anything beside it on any cluster (and 5.4 GB of disk while it runs)."""
    return _lab(job.notebook.name) == "lab06" and job.runs is None


def pick_slots(
    pending: list[Job], running: Mapping[int, Job], ready: Collection[int], spark_at_once: int = SPARK_AT_ONCE
) -> list[tuple[Job, int]]:
    """The jobs to start now, each on a ready slot (a cluster) with no job on it; one that has the machine to
    itself (:func:`machine_alone`) only when nothing runs, and nothing beside it. Taken in order, as :func:`pick`,
    except that a job that :func:`uses_spark` waits while ``spark_at_once`` such jobs run, and the next other
    job takes its slot."""
    if any(machine_alone(j) for j in running.values()):
        return []
    free = sorted(set(ready) - set(running))
    sparks = sum(uses_spark(j) for j in running.values())
    chosen: list[tuple[Job, int]] = []
    for job in pending:
        if len(chosen) == len(free):
            break
        if machine_alone(job):
            return [(job, free[0])] if not running and not chosen else chosen
        if uses_spark(job):
            if sparks >= spark_at_once:
                continue
            sparks += 1
        chosen.append((job, free[len(chosen)]))
    return chosen


def order_own(jobs: list[Job]) -> list[Job]:
    """On clusters of their own: those that have the machine to themselves first (nothing to drain yet, and the
    other clusters start meanwhile), then the longest labs (:data:`LAB_SECONDS`; an unknown one before them: it
    may be longer)."""
    return sorted(
        jobs,
        key=lambda j: (
            not machine_alone(j),
            -LAB_SECONDS.get(_lab(j.notebook.name), float("inf")),
            j.learner,
            j.notebook.name,
        ),
    )


def slots_wanted(jobs: list[Job]) -> int:
    """How many clusters ``jobs`` can keep busy at once: all that have the machine to themselves take one."""
    shared = sum(not machine_alone(j) for j in jobs)
    return max(shared, 1 if len(jobs) > shared else 0)


# -- the journal: one line per graded (learner, notebook, sha256) ---------------------------------------------


def read_journal(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Every result recorded so far (the last of a key wins); a torn last line is cut off the file."""
    if not path.is_file():
        return {}
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):  # a crash in the middle of a line: it never counted
        raw = raw[: raw.rfind(b"\n") + 1]
        with path.open("r+b") as fh:
            fh.truncate(len(raw))
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for line in raw.decode().splitlines():
        try:
            row = json.loads(line)
            found[(row["learner"], row["notebook"], row["sha256"])] = row
        except (ValueError, KeyError, TypeError):
            continue
    return found


def append_journal(path: Path, row: dict[str, Any]) -> None:
    """Add one result: one ``write`` of one whole line on an append-only file, then fsync."""
    data = (json.dumps(row, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


# -- grading one job (in a worker process, or in this one) ----------------------------------------------------


def result_row(job: Job, report: Report | None, error: str = "") -> dict[str, Any]:
    """What the journal keeps of one grading: the report's scores, or why there is none."""
    row: dict[str, Any] = {"learner": job.learner, "notebook": job.notebook.name, "sha256": job.sha256}
    if report is None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        return {**row, "score": 0, "max_score": None, "tasks": [], "graded_at": stamp, "error": error}
    tasks = [
        {"task": t.task, "title": t.title, "points": t.points, "max_points": t.max_points, "message": t.message}
        for t in report.tasks
    ]
    return {
        **row,
        "score": report.score,
        "max_score": report.max_score,
        "tasks": tasks,
        "graded_at": report.graded_at,
        "duration_s": report.duration_s,
        "kit_version": report.kit_version,
        "other_errors": report.other_errors,
        "error": "",
    }


@contextmanager
def _runs_env(runs: Path) -> Iterator[None]:
    """``$EOSLAB_RUNS`` = the learner's runs while their notebook is graded (lab 06 reads them; the
    kernel inherits the variable)."""
    from eoslab.runs import RUNS_ENV

    before = os.environ.get(RUNS_ENV)
    os.environ[RUNS_ENV] = str(runs)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(RUNS_ENV, None)
        else:
            os.environ[RUNS_ENV] = before


def grade_job(job: Job, limit: float, cell_timeout: int, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Grade one notebook with the instructor's kit and the course's check cells; the learner's own report
    beside it is left alone. A notebook refused or found tampering scores 0 and says why.

    ``env`` (a grading cluster's port offset and data folder) goes to the grader's subprocess and its kernel,
    which read it before they import eoslab. This process imported eoslab with the instructor's offset: it
    must never touch a cluster itself."""
    runs = job.runs if job.runs is not None else job.notebook.parent.parent / "runs"  # none sent: an empty one
    runs.mkdir(parents=True, exist_ok=True)
    with _runs_env(runs):
        try:
            rerun = trusted_copy(job.notebook, job.course or default_course())
            report = grade_notebook(rerun, timeout=limit, cell_timeout=cell_timeout, write=False, env=env or {})
        except EoslabError as exc:  # a broken notebook costs its learner only
            return result_row(job, None, str(exc))
    return result_row(job, report)


# -- the pool ------------------------------------------------------------------------------------------------


def _watch(parent: int, stop: Any) -> None:
    """A worker's watchman: when the run stops (Ctrl-C) or its process is gone (killed), end the
    notebook in progress and this worker, so no grading goes on behind the instructor's back."""
    while not stop.wait(STOP_POLL_S) and os.getppid() == parent:
        pass
    stop_nbval_runs()
    os._exit(1)


def _start_worker(parent: int, stop: Any) -> None:
    # Ctrl-C reaches the whole process group: the parent decides (a handler, unlike SIG_IGN, is not
    # inherited by the notebook's kernel, whose interrupts nbval needs)
    signal.signal(signal.SIGINT, lambda *_: None)
    threading.Thread(target=_watch, args=(parent, stop), daemon=True, name="eoslab-watch").start()


OnDone = Callable[[Job, dict[str, Any]], None]


def run_here(jobs: list[Job], grade: tuple[float, int], on_done: OnDone) -> None:
    """Grade ``jobs`` one after the other in this process (``workers=0``: tests and debugging)."""
    for job in jobs:
        on_done(job, grade_job(job, *grade))


class Slots(Protocol):
    """The clusters a run grades on (:class:`eoslab.classroom._clusters.GradingClusters`)."""

    def ready(self) -> set[int]: ...

    def env(self, k: int) -> dict[str, str]: ...


def _next(
    pending: list[Job], running: Mapping[Any, tuple[Job, int]], workers: int, slots: Slots | None
) -> list[tuple[Job, int]]:
    if slots is None:  # one cluster, slot 0
        return [(job, 0) for job in pick(pending, [j for j, _ in running.values()], workers)]
    return pick_slots(pending, {k: j for j, k in running.values()}, slots.ready())


def run_pool(
    jobs: list[Job], workers: int, grade: tuple[float, int], on_done: OnDone, slots: Slots | None = None
) -> None:
    """Grade ``jobs`` on ``workers`` processes, ``on_done`` as each finishes: on the ``slots`` clusters, each
    job on one of its own (:func:`pick_slots`), or without them all on the instructor's (:func:`pick`). A
    result says which slot graded it."""
    ctx = multiprocessing.get_context("spawn")  # the same on Linux, macOS and Windows; no forked threads
    stop = ctx.Event()
    pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_start_worker, initargs=(os.getpid(), stop))
    pending, running = list(jobs), dict[Future[dict[str, Any]], tuple[Job, int]]()
    try:
        while pending or running:
            for job, k in _next(pending, running, workers, slots):
                pending.remove(job)
                env = slots.env(k) if slots is not None else {}
                running[pool.submit(grade_job, job, *grade, env)] = (job, k)
            # a timeout: a slot that becomes ready takes a job before the running ones end
            done, _ = wait(running, timeout=STOP_POLL_S, return_when=FIRST_COMPLETED)
            for future in done:
                job, k = running.pop(future)
                on_done(job, {**future.result(), "slot": k})
    except BaseException as exc:
        stop.set()  # the workers end their notebooks and themselves
        with suppress(OSError):  # their pipes may be gone already: what stopped the run is what is reported
            pool.shutdown(wait=True, cancel_futures=True)
        if isinstance(exc, BrokenProcessPool):
            raise GradingError(
                "A grading worker died (out of memory?): run the same command again; what was graded is kept."
            ) from None
        raise
    pool.shutdown(wait=True)
