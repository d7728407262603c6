"""The class rerun without a cluster or a kernel (a stand-in for nbval reads each notebook's answer): which
labs share the one cluster, the journal a run resumes from, whose score the gradebook counts, and lab 06
graded on the learner's own runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from _classroom import (
    FakeNbval,
    book_rows,
    instructor_course,
    make_course,
    no_jvm,
    notebook,
    quiet,
    report,
    tampered,
)

from eoslab import cli
from eoslab.classroom import _rerun, grade_class, write_submission
from eoslab.classroom._rerun import Job, append_journal, pick, read_journal, runs_alone
from eoslab.labcheck import Report


@pytest.fixture(autouse=True)
def _no_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    no_jvm(monkeypatch)


@pytest.fixture
def instructor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The instructor's course, apart from the class folder (whose every sub-folder is a learner)."""
    return instructor_course(tmp_path_factory.mktemp("instructor"))


@pytest.fixture
def nbval(monkeypatch: pytest.MonkeyPatch) -> FakeNbval:
    fake = FakeNbval()
    monkeypatch.setattr(_rerun, "grade_notebook", fake)
    return fake


# -- one cluster: which labs share it -----------------------------------------------------------------------


def _job(name: str, alone: bool) -> Job:
    return Job("x", Path(name), "s", None, alone)


def test_labs_that_break_nodes_or_set_proxy_rules_run_alone() -> None:
    runs = Path("runs")
    assert [runs_alone(f"lab0{n}_x.ipynb", runs) for n in range(1, 7)] == [True, True, True, False, True, False]
    assert runs_alone("lab06_cost.ipynb", None)  # no runs: it measures a benchmark first
    assert runs_alone("lab99_new.ipynb", runs) and runs_alone("notes.ipynb", runs)  # unknown: the safe side


def test_a_lab_that_runs_alone_has_the_cluster_to_itself_and_waits_its_turn() -> None:
    s1, s2, s3, a1, a2 = (_job("s1", False), _job("s2", False), _job("s3", False), _job("a1", True), _job("a2", True))
    assert pick([s1, s2, s3], [], 2) == [s1, s2]
    assert pick([s3], [s1], 2) == [s3]
    assert pick([s3], [s1, s2], 2) == []
    assert pick([a1, s1], [s2], 4) == []  # the cluster must drain first; s1 waits behind a1
    assert pick([a1, s1], [], 4) == [a1]
    assert pick([s1, a1, s2], [], 4) == [s1]
    assert pick([s1, s2], [a1], 4) == []
    assert pick([a1, a2], [], 1) == [a1]
    assert pick([], [], 3) == []


# -- the journal ------------------------------------------------------------------------------------------


def test_the_journal_keeps_whole_lines_and_the_last_result_of_a_key(tmp_path: Path) -> None:
    path = tmp_path / "gradebook.jsonl"
    append_journal(path, {"learner": "ana", "notebook": "lab01.ipynb", "sha256": "s1", "score": 1})
    append_journal(path, {"learner": "ana", "notebook": "lab01.ipynb", "sha256": "s1", "score": 2})
    append_journal(path, {"learner": "bo", "notebook": "lab01.ipynb", "sha256": "s2", "score": 0})
    with path.open("ab") as fh:
        fh.write(b'{"learner": "cy", "notebook": "lab0')  # killed in the middle of a line
    found = read_journal(path)
    assert {k: v["score"] for k, v in found.items()} == {
        ("ana", "lab01.ipynb", "s1"): 2,
        ("bo", "lab01.ipynb", "s2"): 0,
    }
    assert path.read_bytes().endswith(b"}\n")  # the torn line is cut, so the next append starts clean
    append_journal(path, {"learner": "cy", "notebook": "lab01.ipynb", "sha256": "s3", "score": 2})
    assert len(read_journal(path)) == 3


# -- whose score counts -------------------------------------------------------------------------------------


def test_a_report_edited_together_with_its_notebook_does_not_raise_the_grade(
    tmp_path: Path, nbval: FakeNbval, instructor: Path
) -> None:
    klass = tmp_path / "class"
    klass.mkdir()
    course = make_course(tmp_path / "dee", {"lab01_a.ipynb": 7}, reports={"lab01_a.ipynb": 2.0})  # wrong, claims 2/2
    write_submission(course, learner="dee", dest=klass)
    (klass / "eve").mkdir()
    (klass / "eve" / "lab01_a.ipynb").write_text(notebook(42))

    book = grade_class(klass, course=instructor, workers=0, progress=quiet)

    rows = book_rows(klass)
    dee = rows[("dee", "lab01_a.ipynb")]
    assert (dee["score"], dee["self-reported"], dee["report check"], dee["graded by"]) == (
        "0.0",
        "2.0",
        "ok",
        "instructor rerun",
    )
    assert rows[("eve", "lab01_a.ipynb")]["score"] == "2.0"
    assert "lab01_a.ipynb: mean 1.0 / 2 over 2 learners" in book.text  # dee's claim is not in the mean
    assert "dee: lab01_a.ipynb self-reported 2 but the rerun gives 0" in book.text
    assert book.text.startswith("Grades from the instructor's rerun")

    untrusted = grade_class(klass, rerun=False, progress=quiet)
    assert untrusted.text.startswith("SELF-REPORTED GRADES, UNTRUSTED (--no-rerun)")
    dee_row = next(r for r in untrusted.rows if r["learner"] == "dee")
    assert (dee_row["score"], dee_row["graded by"]) == (2.0, "self-reported (untrusted)")
    assert book_rows(klass)[("dee", "lab01_a.ipynb")]["graded by"] == "self-reported (untrusted)"


def test_an_archive_changed_after_submit_is_not_counted_on_its_reports(
    tmp_path: Path, nbval: FakeNbval, instructor: Path
) -> None:
    klass = tmp_path / "class"
    klass.mkdir()
    course = make_course(tmp_path / "fay", {"lab01_a.ipynb": 7}, reports={"lab01_a.ipynb": 0.0})
    archive = write_submission(course, learner="fay", dest=tmp_path)
    report(course / "labs", "lab01_a.ipynb", 2.0)
    edited = (course / "labs" / "lab01_a.report.json").read_bytes()
    tampered(archive.path, klass / archive.path.name, {"labs/lab01_a.report.json": edited})

    book = grade_class(klass, rerun=False, progress=quiet)
    row = book.rows[0]
    assert row["manifest"].startswith("labs/lab01_a.report.json differs from its manifest sha256")
    assert "does not match its manifest" in row["error"] and "0 graded notebooks" in book.text
    rerun = grade_class(klass, course=instructor, workers=0, progress=quiet)
    assert rerun.rows[0]["score"] == 0 and "fay: archive submission-fay-" in rerun.text  # noted, and rerun anyway


def test_a_class_run_interrupted_halfway_resumes_with_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instructor: Path
) -> None:
    klass = tmp_path / "class"
    for learner, answer in (("ana", 42), ("bo", 1), ("cy", 42)):
        course = make_course(tmp_path / learner, {"lab01_a.ipynb": answer, "lab04_b.ipynb": answer})
        klass.mkdir(exist_ok=True)
        write_submission(course, learner=learner, dest=klass)
    (klass / "dee").mkdir()
    (klass / "dee" / "lab04_b.ipynb").write_text("{ not a notebook")
    first = FakeNbval(interrupt_at=4)
    monkeypatch.setattr(_rerun, "grade_notebook", first)
    with pytest.raises(KeyboardInterrupt):
        grade_class(klass, course=instructor, workers=0, progress=quiet)
    # the three lab04s graded, dee's refused before any nbval run (not a notebook), the 4th nbval run interrupted
    assert len(read_journal(klass / "gradebook.jsonl")) == 4 and len(book_rows(klass)) == 4  # written as it went
    assert len(first.calls) == 4 and "dee/lab04_b.ipynb" not in first.calls

    second = FakeNbval()
    monkeypatch.setattr(_rerun, "grade_notebook", second)
    book = grade_class(klass, course=instructor, workers=0, progress=quiet)
    assert sorted(second.calls) == sorted(set(second.calls))
    assert set(first.calls[:3]).isdisjoint(second.calls) and first.calls[3] in second.calls
    assert (book.graded_now, book.kept) == (3, 4) and len(first.calls[:3] + second.calls) == 6
    rows = book_rows(klass)
    assert len(rows) == 7 and rows[("dee", "lab04_b.ipynb")]["error"].startswith("lab04_b.ipynb is not a valid")
    assert {k: r["score"] for k, r in rows.items() if k[0] != "dee"} == {
        (who, lab): "2.0" if who != "bo" else "0.0"
        for who in ("ana", "bo", "cy")
        for lab in ("lab01_a.ipynb", "lab04_b.ipynb")
    }

    third = FakeNbval()
    monkeypatch.setattr(_rerun, "grade_notebook", third)
    (klass / "dee" / "lab04_b.ipynb").write_text(notebook(42))  # a changed notebook: another sha256
    book = grade_class(klass, course=instructor, workers=0, progress=quiet)
    assert third.calls == ["dee/lab04_b.ipynb"] and book_rows(klass)[("dee", "lab04_b.ipynb")]["score"] == "2.0"


def test_ctrl_c_between_a_journal_line_and_the_gradebook_leaves_the_gradebook_equal_to_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instructor: Path, nbval: FakeNbval
) -> None:
    """Seen in CI: Ctrl-C landed after the second journal line and before the gradebook's rewrite, and the
    gradebook the instructor opened lacked a notebook the journal (and the next run) counted as graded."""
    from eoslab.classroom import _class_grades

    klass = tmp_path / "class"
    klass.mkdir()
    for learner in ("ana", "bo", "cy"):
        write_submission(make_course(tmp_path / learner, {"lab01_a.ipynb": 42}), learner=learner, dest=klass)
    lines = []

    def append_then_interrupt(path: Path, row: dict[str, Any]) -> None:
        append_journal(path, row)
        lines.append(row)
        if len(lines) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(_class_grades, "append_journal", append_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        grade_class(klass, course=instructor, workers=0, progress=quiet)
    journal = read_journal(klass / "gradebook.jsonl")
    assert len(journal) == 2
    assert set(book_rows(klass)) == {(r["learner"], r["notebook"]) for r in journal.values()}


def test_a_broken_pipe_is_harmless_only_when_it_is_stdouts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`eoslab status | head` closes stdout: exit 0, quietly. A pipe between the kit's own processes breaking
    (a grading pool stopped by Ctrl-C) is an error, not a success: it once turned an interrupted class run
    into exit 0 with nothing said."""
    from eoslab.cli import _cluster

    def broken(args: Any) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(_cluster, "cmd_status", broken)
    for reader_open, code in ((True, 1), (False, 0)):
        r, w = os.pipe()
        with os.fdopen(w, "w") as out:
            if not reader_open:
                os.close(r)
            monkeypatch.setattr("sys.stdout", out)
            assert cli.main(["status"]) == code
            monkeypatch.undo()
            monkeypatch.setattr(_cluster, "cmd_status", broken)
        if reader_open:
            os.close(r)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a pipe to one of its own processes broke" in err and "run the command again" in err


def test_shared_labs_are_graded_first_then_those_that_run_alone(
    tmp_path: Path, nbval: FakeNbval, instructor: Path
) -> None:
    for learner in ("ana", "bo"):
        (tmp_path / learner).mkdir()
        for lab in ("lab01_a.ipynb", "lab04_b.ipynb", "lab06_c.ipynb"):
            (tmp_path / learner / lab).write_text(notebook(42))
    (tmp_path / "bo" / "runs").mkdir()
    grade_class(tmp_path, course=instructor, workers=0, progress=quiet)
    assert nbval.calls == [
        "ana/lab04_b.ipynb",
        "bo/lab04_b.ipynb",
        "bo/lab06_c.ipynb",  # bo's runs came with him: lab 06 reads them beside others
        "ana/lab01_a.ipynb",
        "ana/lab06_c.ipynb",  # ana sent none: lab 06 measures first, alone
        "bo/lab01_a.ipynb",
    ]


def test_lab06_is_graded_on_the_learners_own_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instructor: Path
) -> None:
    seen: list[str] = []

    def fake(path: Path, **_: Any) -> Report:
        seen.append(os.environ["EOSLAB_RUNS"])
        return Report(path.name, "s", "t", "now", 0.0, [])

    monkeypatch.setattr(_rerun, "grade_notebook", fake)
    monkeypatch.setenv("EOSLAB_RUNS", "/the/instructors/runs")
    (tmp_path / "ana" / "runs").mkdir(parents=True)
    (tmp_path / "ana" / "lab06_cost.ipynb").write_text(notebook(1))
    (tmp_path / "bo").mkdir()
    (tmp_path / "bo" / "lab06_cost.ipynb").write_text(notebook(1))
    grade_class(tmp_path, course=instructor, workers=0, progress=quiet)
    assert seen[0] == str(tmp_path / "ana" / "runs")
    assert Path(seen[1]).is_relative_to(tmp_path / ".unpacked") and Path(seen[1]).name == "runs"

    assert os.environ["EOSLAB_RUNS"] == "/the/instructors/runs"


def test_grade_class_options_are_checked_before_anything_runs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["grade", "--class", "x", "--workers", "0"])
    assert exc.value.code == 2 and "give a whole number of worker processes, 1 or more" in capsys.readouterr().err
