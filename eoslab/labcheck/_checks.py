"""What a graded check cell calls: a verdict with what was seen, what was expected, and a hint.

A check never ends in a bare ``AssertionError``: it raises :class:`CheckFailed`,
whose message is the sentence a learner reads, and it records its verdict in
the grading log (``$EOSLAB_GRADE_LOG``, JSON lines) so ``eoslab grade`` can
build a score report without parsing tracebacks.
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from eoslab.errors import GradingError
from eoslab.labcheck import _forbidden
from eoslab.labcheck._not_started import unstarted

GRADE_LOG_ENV = "EOSLAB_GRADE_LOG"
TODO_HINT = "finish the TODO cell above, run it, then run this check again."


class CheckFailed(GradingError):
    """A graded check did not pass; the message says what was seen, what was expected, and a hint."""


@dataclass(frozen=True)
class Verdict:
    task: str
    passed: bool
    message: str
    points: float
    max_points: float
    at: float

    def __str__(self) -> str:
        mark = "✔" if self.passed else "✘"
        return f"{mark} {self.task}: {self.message}"


def _record(verdict: Verdict) -> None:
    path = os.environ.get(GRADE_LOG_ENV)
    if not path:
        return
    with open(path, "a") as fh:
        fh.write(json.dumps(asdict(verdict)) + "\n")


_UNSET: Any = object()


def verdict(
    task: str, passed: bool, *, ok: str, saw: Any = _UNSET, expected: Any = _UNSET, hint: str = "", points: float = 1.0
) -> Verdict:
    """Record and return a verdict; raise :class:`CheckFailed` when it failed.

    ``ok`` is the message on success; on failure the message is built from
    ``saw``, ``expected`` and ``hint``.
    """
    if passed:
        message = ok
    else:
        parts = [f"saw {saw}" if saw is not _UNSET else "", f"expected {expected}" if expected is not _UNSET else ""]
        message = "; ".join(p for p in parts if p) + "."
        if hint:
            message += f" Hint: {hint}"
    v = Verdict(task, passed, message, points if passed else 0.0, points, time.time())
    _record(v)
    if not passed:
        raise CheckFailed(f"{task}: {message}")
    print(v)
    return v


def _refused(module: str, task: str, answers: list[Any]) -> tuple[str, str] | None:
    try:
        return _forbidden.refusal(module, task, answers)
    except Exception:  # noqa: BLE001 - a cell that cannot be read is judged by the check, and by eoslab grade
        return None


def guarded(task: str, points: float = 1.0) -> Callable[[Callable[..., Verdict]], Callable[..., Verdict]]:
    """Turn any unexpected exception inside a check into a failed verdict with its sentence.

    A learner's TODO left as ``None`` or an answer of the wrong type must read as a
    failed task with a hint, not a traceback from inside the kit. And before any work, an
    answer whose cell uses a kit function that computes it (:mod:`eoslab.labcheck._forbidden`)
    is refused with the rule, and an answer still as the lab left it is told so
    (:mod:`eoslab.labcheck._not_started`): the check's experiment could only confirm it.
    """

    def wrap(fn: Callable[..., Verdict]) -> Callable[..., Verdict]:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Verdict:
            hit = _refused(fn.__module__, task, [*args, *kwargs.values()])
            if hit is not None:
                entry, where = hit
                saw = _forbidden.saw(entry, where)
                return verdict(task, False, ok="", saw=saw, hint=_forbidden.sentence(task, entry), points=points)
            still = unstarted(fn, args, kwargs)
            if still is not None:  # before the check's experiment: it could only confirm the TODO
                return verdict(task, False, ok="", saw=still, hint=TODO_HINT, points=points)
            try:
                return fn(*args, **kwargs)
            except CheckFailed:
                raise
            except Exception as exc:  # noqa: BLE001 - every other failure becomes the task's verdict
                return verdict(
                    task,
                    False,
                    ok="",
                    saw=f"{type(exc).__name__}: {exc}",
                    hint=TODO_HINT,
                    points=points,
                )

        return run

    return wrap
