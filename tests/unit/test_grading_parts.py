"""The pieces the long graded checks were cut into (issue 22), each on what it decides, without a cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from eoslab.classroom import _gradebook, collect
from eoslab.errors import EoslabError

# -- the gradebook grades what has no report, and a broken notebook costs only its learner ------------


def test_collect_grades_unreported_notebooks_and_a_broken_one_is_a_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graded: list[tuple[str, float, int]] = []

    def fake_grade(nb: Path, *, timeout: float, cell_timeout: int) -> None:
        graded.append((f"{nb.parent.name}/{nb.name}", timeout, cell_timeout))
        if nb.parent.name == "bo":
            raise EoslabError(f"{nb.name} did not finish within {timeout:g} s: it was stopped and scores 0.")

    monkeypatch.setattr(_gradebook, "grade_notebook", fake_grade)
    for learner in ("ana", "bo"):
        (tmp_path / learner).mkdir()
        (tmp_path / learner / "lab01_x.ipynb").write_text("{}")
    said: list[str] = []
    rows = collect(tmp_path, limit=9.0, cell_timeout=4, progress=said.append)
    assert graded == [("ana/lab01_x.ipynb", 9.0, 4), ("bo/lab01_x.ipynb", 9.0, 4)]
    assert said == ["grading ana/lab01_x.ipynb ...", "grading bo/lab01_x.ipynb ..."]
    # ana's grading wrote no report here (the fake): nothing handed in; bo's broke: its error, score 0
    assert [(r["learner"], r["notebook"], r["score"]) for r in rows] == [("ana", None, 0), ("bo", "lab01_x.ipynb", 0)]
    assert rows[1]["error"] == "lab01_x.ipynb did not finish within 9 s: it was stopped and scores 0."
