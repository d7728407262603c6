"""Grading logic on notebooks and outcomes (no cluster): lab generation, scoring, the gradebook."""

import hashlib
import json
from typing import Any

import pytest

from eoslab.classroom import collect, lab_from_solution, strip_solution, summary, write_gradebook
from eoslab.classroom._gradebook import read_report
from eoslab.errors import EoslabError, GradingError
from eoslab.labcheck import CheckFailed, score, verdict
from eoslab.labcheck._checks import GRADE_LOG_ENV, guarded


def test_solution_region_becomes_its_stub():
    src = "x = 1\n    ### BEGIN SOLUTION\n    conf = {'a': 1}\n    ### STUB conf = {}  # TODO\n    ### END SOLUTION\ny"
    assert strip_solution(src) == "x = 1\n    conf = {}  # TODO\ny"


def test_region_without_stub_gets_a_todo_comment():
    assert strip_solution("### BEGIN SOLUTION\nz = 3\n### END SOLUTION") == "# TODO: your code here"


def test_unclosed_region_is_a_sentence():
    with pytest.raises(EoslabError, match="has no '### END SOLUTION'"):
        strip_solution("### BEGIN SOLUTION\nz = 3")


def test_lab_strips_outputs_keeps_ids_and_grade_metadata():
    nb: dict[str, Any] = {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "metadata": {"eoslab": {"grade": {"task": "t1"}}},
                "source": "### BEGIN SOLUTION\na=1\n### END SOLUTION",
                "outputs": [{"x": 1}],
                "execution_count": 3,
            }
        ],
        "metadata": {},
    }
    lab = lab_from_solution(nb)
    cell = lab["cells"][0]
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert cell["id"] == "c1" and cell["metadata"]["eoslab"]["grade"]["task"] == "t1"
    assert nb["cells"][0]["outputs"] == [{"x": 1}]  # the solution is not modified


NB = {
    "cells": [
        {"cell_type": "code", "id": "a", "metadata": {"eoslab": {"grade": {"task": "t1", "points": 2}}}, "source": ""},
        {"cell_type": "code", "id": "b", "metadata": {"eoslab": {"grade": {"task": "t2"}}}, "source": ""},
        {"cell_type": "code", "id": "c", "metadata": {"eoslab": {"grade": {"task": "t3"}}}, "source": ""},
        {"cell_type": "code", "id": "d", "metadata": {"eoslab": {"grade": {"task": "t4"}}}, "source": ""},
        {"cell_type": "code", "id": "e", "metadata": {"eoslab": {"grade": {"task": "t5"}}}, "source": ""},
        {"cell_type": "code", "id": "x", "metadata": {}, "source": ""},
    ]
}


def _out(cell_id, outcome="passed", timeout=False, xfail=False, tail=""):
    return {"cell_id": cell_id, "outcome": outcome, "timeout": timeout, "xfail": xfail, "error_tail": tail}


def test_score_counts_timeouts_xfails_and_missing_verdicts_as_failed():
    outcomes = [
        _out("a"),
        _out("b", "failed", tail="CheckFailed: t2: saw 1"),
        _out("c", "failed", timeout=True),
        _out("d", "skipped", xfail=True),
        _out("e"),
        _out("x", "failed", tail="ZeroDivisionError"),
    ]
    verdicts = [
        {"task": "t1", "passed": True, "message": "ok"},
        {"task": "t2", "passed": False, "message": "saw 1"},
        {"task": "t3", "passed": True, "message": "would have passed"},
        {"task": "t4", "passed": True, "message": "stale"},
    ]
    tasks, others = score(NB, outcomes, verdicts, cell_timeout=7)
    got = {t.task: (t.passed, t.points) for t in tasks}
    assert got == {"t1": (True, 2.0), "t2": (False, 0.0), "t3": (False, 0.0), "t4": (False, 0.0), "t5": (False, 0.0)}
    assert "did not finish within 7 s" in tasks[2].message
    assert "earlier cell timed out" in tasks[3].message
    assert "no check recorded a verdict" in tasks[4].message
    assert others == ["cell x failed: ZeroDivisionError"]


def test_verdict_raises_a_sentence_and_logs(tmp_path, monkeypatch):
    log = tmp_path / "v.jsonl"
    monkeypatch.setenv(GRADE_LOG_ENV, str(log))
    verdict("t1", True, ok="fine")
    with pytest.raises(CheckFailed) as err:
        verdict("t2", False, ok="", saw="2 batches", expected="1 batch", hint="turn idempotence on")
    assert str(err.value) == "t2: saw 2 batches; expected 1 batch. Hint: turn idempotence on"
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["task"], r["passed"]) for r in rows] == [("t1", True), ("t2", False)]


def test_guarded_turns_a_crash_on_a_learners_answer_into_a_failed_task():
    @guarded("t9")
    def check(x):
        return verdict("t9", x["k"] == 1, ok="ok")

    with pytest.raises(CheckFailed, match="t9: saw TypeError: .* Hint: finish the TODO cell above"):
        check(42)


def _hand_in(folder, pts, *, notebook_text='{"cells": []}', sha=None, score=None):
    """A learner folder as `eoslab grade` leaves it: the lab and its report (sha256 of the lab's bytes)."""
    folder.mkdir()
    (folder / "lab01.ipynb").write_text(notebook_text)
    report = {
        "notebook": "lab01.ipynb",
        "score": pts if score is None else score,
        "max_score": 2.0,
        "sha256": sha or hashlib.sha256(notebook_text.encode()).hexdigest(),
        "graded_at": "now",
        "tasks": [{"task": "t1", "max_points": 2.0, "points": pts}],
    }
    (folder / "lab01.report.json").write_text(json.dumps(report))


def test_gradebook_from_reports(tmp_path):
    _hand_in(tmp_path / "ana", 2.0)
    _hand_in(tmp_path / "bo", 0.0)
    (tmp_path / "cy").mkdir()
    rows = collect(tmp_path)
    assert [(r["learner"], r["score"]) for r in rows] == [("ana", 2.0), ("bo", 0.0), ("cy", 0)]
    assert [r.get("sha256 check") for r in rows[:2]] == ["ok", "ok"]
    assert "nothing handed in" in rows[2]["error"]
    write_gradebook(rows, tmp_path / "g.csv")
    assert (tmp_path / "g.csv").read_text().splitlines()[0].startswith("learner,notebook,score")


def test_a_report_that_does_not_match_its_notebook_is_flagged_and_not_counted(tmp_path):
    _hand_in(tmp_path / "ana", 2.0)
    _hand_in(tmp_path / "bo", 2.0)
    (tmp_path / "bo" / "lab01.ipynb").write_text('{"cells": [], "edited": "after grading"}')
    _hand_in(tmp_path / "cy", 2.0)
    (tmp_path / "cy" / "lab01.ipynb").unlink()  # the report alone
    _hand_in(tmp_path / "dee", 0.0, score=2.0)  # the score typed into the report
    rows = {r["learner"]: r for r in collect(tmp_path)}
    assert rows["ana"]["sha256 check"] == "ok" and rows["ana"]["error"] == ""
    assert rows["bo"]["sha256 check"] == "mismatch" and "does not match its report" in rows["bo"]["error"]
    assert rows["cy"]["sha256 check"] == "no notebook" and "cannot be checked" in rows["cy"]["error"]
    assert rows["dee"]["sha256 check"] == "edited" and "was edited" in rows["dee"]["error"]
    text = summary(list(rows.values()))
    assert "lab01.ipynb: mean 2.0 / 2 over 1 learners" in text  # only ana's report counts
    for learner in ("bo", "cy", "dee"):
        assert f"  {learner}: " in text
    write_gradebook(list(rows.values()), tmp_path / "gradebook.csv")
    assert "sha256 check" in (tmp_path / "gradebook.csv").read_text().splitlines()[0]


def test_a_report_that_is_not_json_is_a_row_not_a_crash(tmp_path):
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / "lab01.report.json").write_text("{ not json")
    rows = collect(tmp_path)
    assert rows[0]["learner"] == "ana"
    assert rows[0]["error"].startswith("lab01.report.json is not an eoslab grade report: it cannot be read as JSON")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[]", "it holds an array where a JSON object belongs"),
        ('"x"', "it holds a string where a JSON object belongs"),
        ("3", "it holds a number where a JSON object belongs"),
        ("null", "it holds null where a JSON object belongs"),
        ("{}", "it has no notebook, score, max_score"),
        ('{"notebook": "lab01.ipynb", "score": 2}', "it has no max_score"),
        ('{"notebook": "lab01.ipynb", "score": 0, "max_score": 2, "tasks": [0]}', "its tasks cannot be read"),
    ],
)
def test_a_report_that_is_json_but_no_report_is_a_row_not_a_crash(tmp_path, text, why):
    _hand_in(tmp_path / "ana", 2.0)
    (tmp_path / "bo").mkdir()
    (tmp_path / "bo" / "lab01.report.json").write_text(text)
    rows = {r["learner"]: r for r in collect(tmp_path, progress=lambda _: None)}
    assert rows["ana"]["score"] == 2.0 and rows["ana"]["error"] == ""  # the class is still graded
    bo = rows["bo"]
    assert (bo["notebook"], bo["score"], bo["max_score"]) == ("lab01.report.json", 0, None)
    assert bo["error"].startswith(f"lab01.report.json is not an eoslab grade report: {why}")
    assert bo["error"].endswith("or grade the notebook itself (--rerun).") and bo["error"].count(". ") == 0
    assert "  bo: lab01.report.json is not an eoslab grade report" in summary(list(rows.values()))


def test_read_report_says_what_a_file_is_instead_of_a_report(tmp_path):
    rep = tmp_path / "lab02.report.json"
    rep.write_text("[1, 2]")
    with pytest.raises(GradingError, match=r"^lab02\.report\.json is not an eoslab grade report: it holds an array"):
        read_report(rep)
    rep.write_text(json.dumps({"notebook": "lab02.ipynb", "score": 1, "max_score": 2}))
    assert read_report(rep)["score"] == 1
