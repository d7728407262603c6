"""Checks of lab 07 (diagnosis): three programs, each with one mistake drawn for the learner; name it, fix it.

The draw: :func:`draw` picks three of :data:`eoslab.m07_production.lesson.MISTAKES` from a seed made of the
learner's name (``LEARNER`` in the lab's setup cell), so two learners get different sets in a different
order, and the instructor's rerun of a hand-in gets the learner's own. :func:`show` prints a case's program
(plain confluent-kafka code), :func:`evidence` runs it under the scenario that exposes its mistake and shows
what the checker and the processes said.

A check (:func:`check_case`) judges two things, on the cluster: the mistake named (one of the names; another
name fails with what that mistake's evidence would look like, so a plausible wrong diagnosis is told why
it does not fit) and the fixed program, run under the same scenario: no anomaly, no cause named by the
checker, every input processed, caught up in time.
"""

from __future__ import annotations

import hashlib
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eoslab.cluster import Cluster
from eoslab.errors import GradingError
from eoslab.labcheck import Verdict, guarded, verdict
from eoslab.m07_production.lesson import MISTAKES, ProgramRun, run_program, write_source
from eoslab.m07_production.lesson import program as program_source

CASES = 3
"""Programs a learner is handed, drawn from the five mistakes."""
EVIDENCE_LIMIT = 25.0
"""Seconds :func:`evidence` lets a broken program run: a stall shows well within it."""

HINT_NAME = (
    "write your name in LEARNER in the setup cell and run it: it decides which programs you are given "
    "(and the instructor's rerun gives you the same)."
)


def draw(learner: str) -> list[str]:
    """The mistakes of ``learner``'s three cases, in order: a choice seeded by a hash of the name."""
    seed = int.from_bytes(hashlib.sha256(learner.strip().lower().encode()).digest()[:8], "big")
    return random.Random(seed).sample(sorted(MISTAKES), CASES)


def _mistake(case: int, learner: str) -> str:
    if case not in range(1, CASES + 1):
        raise GradingError(f"case={case!r}: lab 07 has cases 1 to {CASES}.")
    return draw(learner)[case - 1]


def show(case: int, learner: str) -> None:
    """Print case ``case``'s program: copy it into your answer cell and fix it there."""
    if not learner:
        print(f"✘ {HINT_NAME}")
        return
    print(program_source(_mistake(case, learner), name=f"case_{case}"))


def evidence(cluster: Cluster, case: int, learner: str) -> ProgramRun | None:
    """Run case ``case``'s program as handed out, under the scenario that exposes its mistake; print what
    happened and return the run (``.verdict`` shows the checker's table, with the causes it names)."""
    if not learner:
        print(f"✘ {HINT_NAME}")
        return None
    mistake = MISTAKES[_mistake(case, learner)]
    s = mistake.scenario
    scenario = type(s)(**{**s.__dict__, "limit": min(s.limit, EVIDENCE_LIMIT)})
    with tempfile.TemporaryDirectory(prefix="eoslab-lab07-") as folder:
        spec = write_source(program_source(mistake.name, name=f"case_{case}"), f"case_{case}", folder)
        run = run_program(cluster, spec, scenario, run_dir=folder, name=f"case{case}")
        print(_describe(scenario))
        print(run.notes())
        for line in _errors(run)[:3]:
            print("  stderr:", line)
    return run


def _describe(s: Any) -> str:
    parts = [f"{s.inputs} orders over {s.partitions} partitions", f"{s.instances} instance(s)"]
    if s.die_at:
        point, _, n = s.die_at.partition(":")
        parts.append(f"the first process killed right {point.replace('-', ' ')} #{n}, then restarted")
    if s.aborted_inputs:
        parts.append(f"{s.aborted_inputs} orders written in a transaction that aborted (cancelled)")
    return "The run: " + "; ".join(parts) + "."


def _errors(run: ProgramRun) -> list[str]:
    out = []
    for h in run.histories:
        err = h.with_suffix(".stderr")
        if err.exists():
            out += [ln for ln in err.read_text(errors="replace").splitlines() if ": stopped on " in ln]
    return out


def _judge(task: str, case: int, learner: str, mistake: Any, fixed: Any, cluster: Cluster) -> Verdict:
    if not isinstance(learner, str) or not learner.strip():
        return verdict(task, False, ok="", saw="LEARNER empty", hint=HINT_NAME, points=2)
    drawn = _mistake(case, learner)
    if mistake not in MISTAKES:
        return verdict(task, False, ok="", saw=f"the mistake named {mistake!r}",
                       expected=f"one of {list(MISTAKES)}", hint="name it by its key in lab07.MISTAKES.",
                       points=2)  # fmt: skip
    if mistake != drawn:
        other = MISTAKES[mistake]
        return verdict(
            task, False, ok="", saw=f"'{mistake}' named for case {case}",
            expected="the mistake this program's evidence shows",
            hint=f"'{mistake}' would show this: {other.evidence}. Read the evidence of case {case} again "
                 "(the checker's anomalies and causes, the processes' exits) and compare.",
            points=2,
        )  # fmt: skip
    if not callable(fixed) or getattr(fixed, "__name__", "") != f"case_{case}":
        return verdict(task, False, ok="", saw=f"case_{case} = {fixed!r}",
                       expected=f"your fixed program, def case_{case}(bootstrap, src, out, group, instance)",
                       hint=f"paste the program lab07.show({case}, LEARNER) printed, fix it, run the cell.",
                       points=2)  # fmt: skip
    return _run_fixed(task, case, drawn, fixed, cluster)


def _run_fixed(task: str, case: int, drawn: str, fixed: Callable[..., Any], cluster: Cluster) -> Verdict:
    with tempfile.TemporaryDirectory(prefix="eoslab-lab07-") as folder:
        run = run_program(cluster, fixed, MISTAKES[drawn].scenario, run_dir=Path(folder), name=f"case{case}")
        errors = _errors(run)  # the processes' stderr, read before the folder goes
    if run.clean and run.verdict.stats.get("read_committed records", 0) >= run.inputs:
        return verdict(task, True, ok=f"'{drawn}' named and fixed: {run.notes()}; no anomaly, no cause.", points=2)
    found = ", ".join(f"{n} {a}" for a, n in run.verdict.found.items()) or "no anomaly"
    causes = "; ".join(c.sentence() for c in run.verdict.causes) or "no cause named"
    return verdict(
        task, False, ok="", saw=f"your fixed case_{case} under the same scenario: {run.notes()}; {found}; {causes}"
        + (f"; {errors[0]}" if errors else ""),
        expected="no anomaly, no cause, every order processed once, caught up",
        hint=f"the diagnosis is right ({MISTAKES[drawn].what}); the fix does not remove it yet.",
        points=2,
    )  # fmt: skip


@guarded("t1", points=2)
def check_case_1(cluster: Cluster, learner: str, mistake: str, fixed: Callable[..., Any]) -> Verdict:
    """Task 1: case 1's mistake named, and the fixed program clean under the scenario that exposed it."""
    return _judge("t1", 1, learner, mistake, fixed, cluster)


@guarded("t2", points=2)
def check_case_2(cluster: Cluster, learner: str, mistake: str, fixed: Callable[..., Any]) -> Verdict:
    """Task 2: the same for case 2."""
    return _judge("t2", 2, learner, mistake, fixed, cluster)


@guarded("t3", points=2)
def check_case_3(cluster: Cluster, learner: str, mistake: str, fixed: Callable[..., Any]) -> Verdict:
    """Task 3: the same for case 3."""
    return _judge("t3", 3, learner, mistake, fixed, cluster)
