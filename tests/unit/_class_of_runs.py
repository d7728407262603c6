"""A generated class of module-06 hand-ins: `eoslab submit` archives over synthetic runs (a known model), each
learner on a machine of their own, for the class's analysis and the instructor's class notebook."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _classroom import make_course

from eoslab.analysis import generate_run
from eoslab.classroom import _submission, write_submission


def machine(i: int) -> dict[str, Any]:
    """The manifest's ``environment`` of learner number ``i``: laptops of 2 to 8 cores, 8 or 16 GiB."""
    return {
        "os": "Linux 6.1",
        "machine": "x86_64" if i % 2 else "arm64",
        "python": "3.11.9",
        "java": "openjdk version 17 (test)",
        "backend": "local",
        "cpus": 2 + 2 * (i % 4),
        "ram_gib": 8.0 if i % 3 else 16.0,
    }


def _on(env: dict[str, Any]) -> Callable[[str], dict[str, Any]]:
    """``_submission.environment`` on the machine ``env`` (whatever the backend)."""
    return lambda backend: env


def learner_runs(course: Path, seeds: list[int], **run: Any) -> Path:
    """``course/runs/`` with one generated run per seed (every run says "jovyan": the login, not the person)."""
    runs = course / "runs"
    for k, seed in enumerate(seeds):
        generate_run(runs / f"run{k:02d}", seed=seed, learner="jovyan", **run)
    return runs


def write_class(
    root: Path, monkeypatch: pytest.MonkeyPatch, learners: dict[str, dict[str, Any]], **common: Any
) -> Path:
    """``root/class/``: one archive per learner, written by `eoslab submit` over generated runs. A learner's
    entry gives their runs' arguments (``runs``: how many, default 1; ``runs=0``: a hand-in without runs)."""
    klass = root / "class"
    klass.mkdir()
    for i, (name, own) in enumerate(learners.items()):
        kw = {**common, **own}
        course = make_course(root / f"course-{name}", {"lab06_cost.ipynb": 0})
        runs = learner_runs(course, [100 * i + k for k in range(kw.pop("runs", 1))], **kw)
        monkeypatch.setattr(_submission, "environment", _on(machine(i)))
        write_submission(course, learner=name, dest=klass, runs=runs if any(runs.glob("*")) else None)
    return klass
