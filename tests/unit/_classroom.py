"""What the classroom's unit tests share: a course whose labs' "grade" is their answer (42 is right),
the instructor's course their check cell is restored from, reports, archives changed after `eoslab
submit`, and a stand-in for nbval that reads the answer."""

from __future__ import annotations

import csv
import hashlib
import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from eoslab.classroom import _submission
from eoslab.errors import EoslabError
from eoslab.labcheck import Report, TaskResult

CHECK: dict[str, Any] = {
    "cell_type": "code",
    "id": "c1",
    "metadata": {"eoslab": {"grade": {"task": "t1", "points": 2, "title": "the answer"}}},
    "source": "lab.check_answer(answer)",
    "outputs": [],
    "execution_count": None,
}
"""The graded cell of every test lab, as the instructor's course has it."""


def notebook(answer: int, check: dict[str, Any] = CHECK) -> str:
    return json.dumps({"cells": [check], "metadata": {}, "nbformat": 4, "nbformat_minor": 5, "answer": answer})


def instructor_course(root: Path, labs: tuple[str, ...] = ("lab01_a", "lab04_b", "lab06_cost")) -> Path:
    """The instructor's course: ``labs/`` with the check cell each learner's notebook is rerun with."""
    (root / "labs").mkdir(parents=True)
    for name in labs:
        (root / "labs" / f"{name}.ipynb").write_text(notebook(0))
    return root


def make_course(root: Path, labs: dict[str, int], *, reports: dict[str, float] | None = None) -> Path:
    """A course folder whose labs hold ``answer`` (42 is right); a report per name in ``reports`` claiming
    that score, with the notebook's true sha256 (a report edited together with its notebook)."""
    (root / "labs").mkdir(parents=True)
    for name, answer in labs.items():
        (root / "labs" / name).write_text(notebook(answer))
    for name, claimed in (reports or {}).items():
        report(root / "labs", name, claimed)
    return root


def report(folder: Path, notebook: str, claimed: float) -> None:
    sha = hashlib.sha256((folder / notebook).read_bytes()).hexdigest()
    data = {
        "notebook": notebook,
        "sha256": sha,
        "score": claimed,
        "max_score": 2.0,
        "graded_at": "then",
        "tasks": [{"task": "t1", "title": "", "points": claimed, "max_points": 2.0, "passed": True, "message": ""}],
    }
    (folder / notebook.replace(".ipynb", ".report.json")).write_text(json.dumps(data))


class FakeNbval:
    """grade_notebook as the class run calls it: 2 points when the notebook's answer is 42; counts its calls;
    raises KeyboardInterrupt at call number ``interrupt_at`` (Ctrl-C halfway)."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.calls: list[str] = []
        self.interrupt_at = interrupt_at

    def __call__(
        self, path: Path, *, timeout: float, cell_timeout: int, write: bool, env: Mapping[str, str] | None = None
    ) -> Report:
        assert write is False, "the rerun must not overwrite the learner's own report"
        self.calls.append(f"{path.parent.parent.name.rsplit('-', 1)[0]}/{path.name}")
        if self.interrupt_at is not None and len(self.calls) == self.interrupt_at:
            raise KeyboardInterrupt
        try:
            data = json.loads(path.read_text())
        except ValueError:
            raise EoslabError(f"{path.name} is not a valid notebook: restore it from the lab folder.") from None
        ok = data["answer"] == 42
        task = TaskResult("t1", "the answer", 2.0 if ok else 0.0, 2.0, ok, "right" if ok else "wrong", "c1")
        return Report(path.name, "sha", "test", "now", 0.1, [task])


def no_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest's Java version is one `java -version`: a JVM start, which unit tests do without."""
    monkeypatch.setattr(_submission, "_java_version", lambda: "openjdk version 17 (test)")


class Clock:
    """``time`` for the submission module: the manifests' ``created_at`` in the order given."""

    def __init__(self, *stamps: str) -> None:
        self.stamps = iter(stamps)

    def gmtime(self) -> None:
        return None

    def strftime(self, fmt: str, _: object = None) -> str:
        return next(self.stamps) if "-" in fmt else "stamp"


def book_rows(root: Path) -> dict[tuple[str, str], dict[str, str]]:
    with (root / "gradebook.csv").open() as fh:
        return {(r["learner"], r["notebook"]): r for r in csv.DictReader(fh)}


def quiet(_: str) -> None:
    pass


def tampered(src: Path, dest: Path, changes: dict[str, bytes | None]) -> Path:
    """``src`` rewritten with some members replaced, added (bytes) or dropped (None); the manifest kept."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w") as zout:
        for info in zin.infolist():
            if info.filename not in changes:
                zout.writestr(info, zin.read(info))
        for name, data in changes.items():
            if data is not None:
                zout.writestr(name, data)
    return dest
