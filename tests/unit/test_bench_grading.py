"""`python -m tools.kitbench grading` without a cluster: the labs it is given, the class it makes, its table and
summary, and a whole run with a stand-in for ``grade_class`` that writes the journal a class run writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from eoslab.errors import SetupError
from tools.kitbench import cli
from tools.kitbench import grading as bench
from tools.kitbench.grading import GradingRun, chosen_labs, differences, make_class, summary, table


def test_labs_are_named_by_number_or_name_and_kept_in_course_order() -> None:
    assert chosen_labs(None) == (bench.LABS, [])
    assert chosen_labs("04, lab01") == (("lab01", "lab04"), [])
    assert chosen_labs("4,07,labx") == (("lab04",), ["lab07", "labx"])


def test_a_bad_labs_option_is_refused_before_needing_a_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--backend", "local", "grading", "--labs", "01,09"]) == 2
    assert "--labs: unknown lab09; use some of 01,02,03,04,05,06" in capsys.readouterr().err
    assert cli.main(["--backend", "local", "grading", "--workers", "1"]) == 2


def _row(learner: str, lab: str, secs: float, score: float = 6.0) -> dict[str, Any]:
    return {"learner": learner, "notebook": f"{lab}_x.ipynb", "sha256": "s", "score": score, "duration_s": secs}


def _run(workers: int, wall: float, rows: list[dict[str, Any]], starts: dict[int, float] | None = None) -> GradingRun:
    return GradingRun(workers, wall, {(r["learner"], r["notebook"]): r for r in rows}, starts or {}, 1.5)


ONE = [_row("learner1", "lab01", 27.4), _row("learner2", "lab01", 27.6), _row("learner1", "lab04", 26.5)]
ONE.append(_row("learner2", "lab04", 23.0))


def test_the_table_gives_seconds_per_lab_per_learner_for_each_run() -> None:
    two = _run(2, 60.0, [_row("learner1", "lab01", 30.1), _row("learner2", "lab01", 29.0)])
    lines = table([_run(1, 105.0, ONE), two], ("lab01", "lab04"), 2)
    assert lines[0] == "seconds per notebook (learner1, learner2; the journal's duration_s):"
    assert lines[1].split() == ["lab", "1", "worker", "2", "workers"]
    assert lines[2].split() == ["lab01", "27.4,", "27.6", "30.1,", "29.0"]
    assert lines[3].split() == ["lab04", "26.5,", "23.0", "-,", "-"]


def test_the_summary_gives_wall_times_the_ratio_against_its_target_and_whether_the_grades_agree() -> None:
    one, two = _run(1, 636.0, ONE), _run(2, 400.0, ONE, starts={1: 31.2})
    lines = summary(one, two, ("lab01", "lab04"), 2)
    assert lines[0] == "1 worker:  4 notebooks in 636 s (23 per hour), machine busy 1.5 of 2 cores"
    assert lines[1].endswith("; grading cluster 1 ready after 31 s (slot 0 grading meanwhile)")
    assert lines[2] == "ratio 2 workers vs 1: 1.59   target ≥ 1.5  met"
    assert lines[3] == "the two gradebooks agree: every score the same"
    slow = summary(one, _run(2, 606.0, ONE[:3] + [_row("learner2", "lab04", 23.0, score=4.0)]), bench.LABS, 2)
    assert slow[2] == "ratio 2 workers vs 1: 1.05   target ≥ 1.5  UNDER TARGET"
    assert slow[3].startswith("a class of 30 at this rate: 454 min with 2 workers (target ≤ 60 min")
    assert slow[4:] == ["the gradebooks DIFFER:", "  learner2/lab04_x.ipynb: (6.0, '') with 1 worker, (4.0, '') with 2"]
    assert differences(one, _run(2, 1.0, ONE[:3]))[0].endswith("(6.0, '') with 1 worker, missing with 2")


def test_the_class_is_copies_of_the_solutions_with_a_run_for_lab06(tmp_path: Path) -> None:
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    for name in ("lab01_idempotence.ipynb", "lab06_cost.ipynb"):
        (course / "solutions" / name).write_text("{}")
    run = tmp_path / "runs" / "20260101T000000-0001"
    run.mkdir(parents=True)
    (run / "summary.parquet").write_text("x")
    make_class(tmp_path / "class", course, 2, ("lab01", "lab06"), run)
    got = sorted(p.relative_to(tmp_path / "class").as_posix() for p in (tmp_path / "class").rglob("*") if p.is_file())
    assert got == [
        f"learner{i}/{f}"
        for i in (1, 2)
        for f in ("lab01_idempotence.ipynb", "lab06_cost.ipynb", "runs/20260101T000000-0001/summary.parquet")
    ]
    with pytest.raises(SetupError, match=r"has no lab02, lab03: give your course folder with --course"):
        make_class(tmp_path / "other", course, 1, ("lab01", "lab02", "lab03"), None)


class _Cluster:
    def require_running(self) -> None:
        pass


class _Book:
    def __init__(self, starts: dict[int, float]) -> None:
        self.cluster_starts = starts


def test_a_whole_run_grades_two_copies_and_writes_its_figures_in_the_runs_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    (course / "solutions" / "lab04_read_committed.ipynb").write_text("{}")
    calls: list[tuple[int, list[str]]] = []

    def grade(klass: Path, *, course: Path, workers: int, progress: Any) -> _Book:
        learners = sorted(p.name for p in klass.iterdir())
        calls.append((workers, learners))
        with (klass / "gradebook.jsonl").open("w") as fh:
            for who in learners:
                fh.write(json.dumps(_row(who, "lab04", 20.0 + workers)) + "\n")
                progress(f"{who}/lab04_read_committed.ipynb: 6/6")
        return _Book({1: 12.0} if workers > 1 else {})

    code = bench.bench_grading(
        _Cluster(),  # type: ignore[arg-type]
        course=course,
        learners=2,
        workers=3,
        labs=("lab04",),
        root=tmp_path / "runs",
        keep=tmp_path / "kept",
        grade=grade,
    )
    out = capsys.readouterr().out
    assert code == 0 and calls == [(1, ["learner1", "learner2"]), (3, ["learner1", "learner2"])]
    assert "\nlab04   21.0, 21.0        23.0, 23.0\n" in out and "the two gradebooks agree" in out
    (folder,) = (tmp_path / "runs").iterdir()
    assert folder.name.startswith("grading-") and f"written to {folder}" in out
    figures = json.loads((folder / "grading.json").read_text())
    assert [r["workers"] for r in figures["runs"]] == [1, 3] and figures["runs"][1]["starts"] == {"1": 12.0}
    assert sorted(p.name for p in folder.iterdir()) == [
        "grading.json",
        "journal-1w.jsonl",
        "journal-3w.jsonl",
        "report.txt",
    ]
    (kept,) = (tmp_path / "kept").iterdir()
    assert sorted(p.name for p in kept.iterdir()) == ["class-1w", "class-3w"]
