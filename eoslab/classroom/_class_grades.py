"""``eoslab grade --class DIR``: the class's gradebook, from the instructor's rerun by default.

A report is checked by the sha256 of the notebook beside it, so a learner who edits both passes:
a report can say who graded what, never how well. So the class grade is the instructor's own
rerun of every notebook (:mod:`eoslab.classroom._rerun`: parallel, resumable), with the course's
own check cells (:mod:`eoslab.classroom._trusted`: restored by id, tampering scored 0), and a
learner's report is shown beside it as ``self-reported``, never counted alone. ``rerun=False`` keeps the
old way (reports counted when their sha256 matches); its gradebook says on every row, and its
summary in its first line, that those grades are self-reported and untrusted.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from eoslab._version import __version__
from eoslab.classroom._clusters import GradingClusters, check_machine
from eoslab.classroom._exports import FEEDBACK, LMS_CSV, class_labs, course_labs, write_feedback, write_lms_csv
from eoslab.classroom._gradebook import (
    NOTEBOOK_LIMIT,
    check_report,
    learner_rows,
    read_report,
    summary,
    write_gradebook,
)
from eoslab.classroom._hand_ins import FOLDER_CHECK, HandIn, gather
from eoslab.classroom._rerun import (
    JOURNAL,
    Job,
    OnDone,
    append_journal,
    order,
    order_own,
    read_journal,
    run_here,
    run_pool,
    slots_wanted,
)
from eoslab.classroom._trusted import check_course, default_course
from eoslab.errors import GradingError
from eoslab.labcheck import CELL_TIMEOUT

GRADEBOOK = "gradebook.csv"
RERUN = "instructor rerun"

RERUN_HEADER = (
    "Grades from the instructor's rerun of every notebook (eoslab {version}); each learner's own report is "
    "shown beside it as self-reported, never counted."
)
FEEDBACK_HEADER = (
    "Your points are those of your instructor's own rerun of the notebooks you handed in (eoslab {version}, "
    "{date}); each task's message says what its check saw."
)
UNTRUSTED_HEADER = (
    "SELF-REPORTED GRADES, UNTRUSTED (--no-rerun): each score is the learner's own report, checked only "
    "against the notebook beside it, so a learner who edits both passes. Grade without --no-rerun to rerun them."
)

Results = dict[tuple[str, str, str], dict[str, Any]]


@dataclass
class ClassGrades:
    """A class run's outcome: the rows, where they were written, what was graded now and what was kept."""

    rows: list[dict[str, Any]]
    path: Path
    text: str
    graded_now: int = 0
    kept: int = 0
    notes: list[str] = field(default_factory=list)
    cluster_starts: dict[int, float] = field(default_factory=dict)
    """Seconds each grading cluster k >= 1 took to start (``eoslab up``), while the others graded."""
    exports: list[Path] = field(default_factory=list)
    """What the rerun wrote for other tools: the LMS's CSV and the learners' feedback folder."""


def _self_reported(hand_in: HandIn, notebook: str) -> tuple[Any, str]:
    """The learner's own score for ``notebook`` (their report beside it), and its sha256 check."""
    rep = hand_in.handed / (Path(notebook).stem + ".report.json")
    if not rep.is_file():
        return "", "no report"
    try:
        data = read_report(rep)
        return data["score"], check_report(data, hand_in.handed)[0]
    except (GradingError, ValueError, TypeError, KeyError, AttributeError):  # its tasks may still be no report's
        return "", "not a report"


def _row(hand_in: HandIn, job: Job, result: dict[str, Any], own: tuple[Any, str]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "learner": hand_in.learner,
        "notebook": result["notebook"],
        "score": result["score"],
        "max_score": result["max_score"],
        "graded by": RERUN,
        "self-reported": own[0],
        "report check": own[1],
        "manifest": hand_in.check,
        "sha256": job.sha256[:12],
        "graded_at": result["graded_at"],
        "error": result["error"],
    }
    for t in result["tasks"]:
        row[f"{t['task']} ({t['max_points']:g})"] = t["points"]
    return row


def _problem(learner: str, notebook: str | None, error: str) -> dict[str, Any]:
    """A row that scores 0 and says why."""
    return {"learner": learner, "notebook": notebook, "score": 0, "max_score": None, "error": error}


def _lone_report_rows(hand_in: HandIn) -> list[dict[str, Any]]:
    """Reports whose notebook was not handed in: nothing to rerun, so nothing counted."""
    have = {nb.name for nb in hand_in.notebooks}
    return [
        _problem(hand_in.learner, rep.name, f"{rep.name} came without its notebook: nothing to rerun, not counted.")
        for rep in sorted(hand_in.handed.glob("*.report.json"))
        if rep.name.removesuffix(".report.json") + ".ipynb" not in have
    ]


def rerun_rows(hand_ins: list[HandIn], jobs: dict[str, list[Job]], results: Results) -> list[dict[str, Any]]:
    """One row per (learner, notebook) graded so far, beside the learner's own score; a row per problem."""
    rows: list[dict[str, Any]] = []
    own = {(h.learner, nb.name): _self_reported(h, nb.name) for h in hand_ins for nb in h.notebooks}
    for h in hand_ins:
        if h.error:
            rows.append(_problem(h.learner, None, h.error))
            continue
        for job in jobs.get(h.learner, []):
            if job.key in results:
                rows.append(_row(h, job, results[job.key], own[(h.learner, job.notebook.name)]))
        lone = _lone_report_rows(h)
        rows.extend(lone)
        if not h.notebooks and not lone:
            rows.append(_problem(h.learner, None, "nothing handed in: no lab notebook and no report."))
    return rows


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):  # a report edited by hand may hold anything
        return None


def _notes(rows: list[dict[str, Any]], hand_ins: list[HandIn], notes: list[str]) -> list[str]:
    """What the instructor should look at beside the means: claims the rerun does not back, archives that
    do not match their manifest, hand-ins set aside."""
    lines = []
    for r in rows:
        own = r.get("self-reported")
        if r.get("graded by") != RERUN or own in ("", None) or _number(own) == float(r["score"]):
            continue
        shown = f"{n:g}" if (n := _number(own)) is not None else repr(own)
        lines.append(f"  {r['learner']}: {r['notebook']} self-reported {shown} but the rerun gives {r['score']:g}")
    for h in hand_ins:
        if h.check not in ("ok", FOLDER_CHECK, ""):
            lines.append(f"  {h.learner}: {h.source} does not match its manifest: {h.check}")
    lines += [f"  {n}" for n in notes]
    return lines


def _line(job: Job, row: dict[str, Any]) -> str:
    score = f"{row['score']:g}/{row['max_score']:g}" if row["max_score"] is not None else "0"
    return f"{job.learner}/{job.notebook.name}: {score}" + (f" ({row['error']})" if row["error"] else "")


CLUSTERS = ("own", "one")
"""``grade_class``'s ``clusters``: a cluster of its own per worker (the default), or all on the instructor's."""


def _own_clusters(clusters: str, workers: int, backend: str | None, notes: list[str]) -> bool:
    """Grade on clusters of their own? Only with 2 workers or more, and on the local backend."""
    if clusters == "one" or workers < 2:
        return False
    if (backend or os.environ.get("EOSLAB_BACKEND") or "local").lower() == "docker":
        notes.append(
            "EOSLAB_BACKEND=docker: every worker graded on your one cluster (clusters of their own are started "
            "on the local backend only)."
        )
        return False
    return True


def _grade_todo(
    todo: list[Job], workers: int, own: bool, grade: tuple[float, int], done: OnDone, tell: Callable[[str], None]
) -> tuple[list[str], dict[int, float]]:
    """Grade ``todo``: here (0 workers), on the instructor's cluster, or on clusters of their own, which are
    started for it and stopped after it; what the clusters want said, and how long each took to start."""
    if workers == 0:
        run_here(todo, grade, done)
        return [], {}
    if not own:
        run_pool(todo, workers, grade, done)
        return [], {}
    wanted = min(workers, slots_wanted(todo))
    notes: list[str] = []
    if wanted > 1 and (warning := check_machine(wanted, psutil.virtual_memory().available, os.cpu_count() or 1)):
        tell(warning)
        notes.append(warning)
    with GradingClusters(workers, say=tell) as slots:
        slots.start(wanted)
        try:
            run_pool(order_own(todo), workers, grade, done, slots)
        finally:
            notes += slots.notes
    return notes, slots.starts


def _rerun(
    root: Path,
    hand_ins: list[HandIn],
    notes: list[str],
    *,
    course: Path,
    workers: int,
    own: bool,
    grade: tuple[float, int],
    say: Callable[[str], None] | None,
) -> ClassGrades:
    """Grade what the journal lacks, the gradebook rewritten after every notebook (see ``_rerun``)."""
    from eoslab._progress import progress_bar

    jobs = {h.learner: [Job.of(h.learner, nb, h.runs, course) for nb in h.notebooks] for h in hand_ins}
    journal, path = root / JOURNAL, root / GRADEBOOK
    results = read_journal(journal)
    todo = order([j for js in jobs.values() for j in js if j.key not in results])
    total = sum(len(js) for js in jobs.values())
    write_gradebook(rerun_rows(hand_ins, jobs, results), path)
    starts: dict[int, float] = {}
    with progress_bar("grading the class", total=total, initial=total - len(todo), unit=" notebooks", delay=0) as bar:

        def tell(line: str) -> None:
            bar.write(line, file=sys.stdout)

        def done(job: Job, row: dict[str, Any]) -> None:
            append_journal(journal, row)  # first: once there, it is never graded again
            results[job.key] = row
            write_gradebook(rerun_rows(hand_ins, jobs, results), path)
            bar.update(1)
            (say or tell)(_line(job, row))

        try:
            more, starts = _grade_todo(todo, workers, own, grade, done, tell)
            notes = [*notes, *more]
        finally:  # Ctrl-C between a journal line and the rewrite after it: the gradebook shows what the journal has
            results = read_journal(journal)
            write_gradebook(rerun_rows(hand_ins, jobs, results), path)
    rows = rerun_rows(hand_ins, jobs, results)
    exports, unlisted = _exports(root, hand_ins, jobs, results, course)
    text = "\n".join(
        [RERUN_HEADER.format(version=__version__), summary(rows), *_notes(rows, hand_ins, notes + unlisted)]
    )
    return ClassGrades(rows, path, text, len(todo), total - len(todo), notes, starts, exports)


def _exports(
    root: Path, hand_ins: list[HandIn], jobs: dict[str, list[Job]], results: Results, course: Path
) -> tuple[list[Path], list[str]]:
    """The LMS's CSV and a feedback file per learner (:mod:`eoslab.classroom._exports`), and the hand-ins left
    out of them because they could not be read (no learner to name)."""
    graded = {h.learner: [results[j.key] for j in jobs[h.learner] if j.key in results] for h in hand_ins if not h.error}
    labs = class_labs(course_labs(course), graded)
    header = FEEDBACK_HEADER.format(version=__version__, date=time.strftime("%Y-%m-%d"))
    paths = [write_lms_csv(root / LMS_CSV, labs, graded), write_feedback(root / FEEDBACK, labs, graded, header)]
    unlisted = [f"{h.learner}: not in {LMS_CSV} nor {FEEDBACK}/ ({h.error})" for h in hand_ins if h.error]
    return paths, unlisted


def _self_reported_book(
    root: Path, hand_ins: list[HandIn], notes: list[str], *, grade: tuple[float, int], say: Callable[[str], None]
) -> ClassGrades:
    """Without a rerun: the learners' reports counted where their sha256 matches (notebooks without one graded here)."""
    rows: list[dict[str, Any]] = []
    for h in hand_ins:
        if h.error:
            rows.append(_problem(h.learner, None, h.error))
            continue
        for row in learner_rows(h.learner, h.handed, limit=grade[0], cell_timeout=grade[1], progress=say):
            row["manifest"] = h.check
            if h.check not in ("ok", FOLDER_CHECK) and not row.get("error"):
                row["error"] = f"the archive does not match its manifest ({h.check}): not counted."
            rows.append(row)
    path = root / GRADEBOOK
    write_gradebook(rows, path)
    text = "\n".join([UNTRUSTED_HEADER, summary(rows), *_notes(rows, hand_ins, notes)])
    return ClassGrades(rows, path, text, notes=notes)


def grade_class(
    root: str | Path,
    *,
    rerun: bool = True,
    course: str | Path | None = None,
    workers: int = 1,
    clusters: str = "own",
    backend: str | None = None,
    limit: float = NOTEBOOK_LIMIT,
    cell_timeout: int = CELL_TIMEOUT,
    progress: Callable[[str], None] | None = None,
) -> ClassGrades:
    """Grade what the class handed in under ``root`` (archives and folders) into ``root/gradebook.csv``.

    With ``rerun`` (the default) every notebook is graded again by this kit on ``workers`` processes
    (0: in this process), resuming from ``root/gradebook.jsonl``, its check cells taken from the labs
    of ``course`` (default: the course this kit runs from, else the current folder); without it, the
    learners' reports are counted, marked untrusted. With ``clusters="own"`` (the default) each worker
    grades on a cluster of its own: the running one and ``workers`` - 1 started for the run and stopped at
    its end (:mod:`eoslab.classroom._clusters`; the local backend only: ``backend``, default
    ``$EOSLAB_BACKEND``); with ``"one"`` all on the running one. ``progress`` gets a line per notebook graded
    (default: printed above the progress bar).
    """
    root = Path(root)
    if workers < 0:
        raise GradingError(f"--workers {workers}: give 1 or more worker processes.")
    if clusters not in CLUSTERS:
        raise GradingError(f"clusters={clusters!r}: give one of {', '.join(CLUSTERS)}.")
    home = Path(course) if course is not None else default_course()
    if rerun:
        check_course(home)
    hand_ins, notes = gather(root)
    if rerun:
        own = _own_clusters(clusters, workers, backend, notes)
        grade = (limit, cell_timeout)
        return _rerun(root, hand_ins, notes, course=home, workers=workers, own=own, grade=grade, say=progress)
    return _self_reported_book(root, hand_ins, notes, grade=(limit, cell_timeout), say=progress or print)
