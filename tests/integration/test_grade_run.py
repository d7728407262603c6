"""`eoslab grade` end to end on a sample notebook: a real kernel under nbval (no cluster needed)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from eoslab.classroom import lab_from_solution
from eoslab.labcheck import grade_notebook

DATA = Path(__file__).resolve().parents[1] / "data" / "grading"
CELL_TIMEOUT = 20
"""The cell timeout the sample is graded with here. Its slowest ordinary cell is its first, the kernel's import of
``eoslab.grading``: 0.7-1.4 s on this 2-core machine quiet, past 5 s once under the suite's load (the system set-up
beside the cluster tier, a load average of 4-5). 20 s leaves it 15 times its quiet figure; the sample's t3 sleeps
30 s, so the grader cuts it whatever the load."""
ERRORING_CELL = "f781fecf"
"""The sample's ungraded cell that raises (after t2): a notebook cut after it has no cell for the timeout to cut."""


def _sample(last: str | None = None) -> dict:
    """The sample solution; with ``last``, its cells after the one with that id left out."""
    nb = json.loads((DATA / "solution_sample.ipynb").read_text())
    if last is not None:
        ids = [c["id"] for c in nb["cells"]]
        nb["cells"] = nb["cells"][: ids.index(last) + 1]
    return nb


def test_solution_and_lab_are_scored_by_behaviour_with_timeouts_counted_as_failures(tmp_path):
    sol = tmp_path / "lab99_sample.ipynb"
    shutil.copy(DATA / "solution_sample.ipynb", sol)
    report = grade_notebook(sol, cell_timeout=CELL_TIMEOUT)
    got = {t.task: t.passed for t in report.tasks}
    assert got == {"t1": True, "t2": False, "t3": False, "t4": False}
    msgs = {t.task: t.message for t in report.tasks}
    assert msgs["t2"] == "saw nothing; expected something. Hint: this task always fails"
    assert f"did not finish within {CELL_TIMEOUT} s" in msgs["t3"]
    assert report.score == 2 and report.max_score == 5
    assert any("ZeroDivisionError" in e for e in report.other_errors)
    saved = json.loads(sol.with_suffix(".report.json").read_text())
    assert saved["score"] == 2 and len(saved["sha256"]) == 64 and saved["kit_version"]

    lab = tmp_path / "learner" / "lab99_sample.ipynb"
    lab.parent.mkdir()
    lab.write_text(json.dumps(lab_from_solution(_sample(last="dd2fc6ff"))))  # up to t1's check: t1 is the point
    lab_report = grade_notebook(lab, cell_timeout=CELL_TIMEOUT)
    first = lab_report.tasks[0]
    assert (first.task, first.passed) == ("t1", False)
    assert first.message.startswith("saw None; expected 42.")


def test_class_gradebook_with_rerun_survives_a_broken_notebook(tmp_path):
    ana = tmp_path / "ana"
    ana.mkdir()
    (ana / "lab99_sample.ipynb").write_text(json.dumps(_sample(last=ERRORING_CELL)))
    bo = tmp_path / "bo"
    bo.mkdir()
    (bo / "lab99_sample.ipynb").write_text("{ this is not a notebook")
    # The instructor's course, outside the class folder: the rerun takes its check cells from there.
    course = tmp_path.parent / f"{tmp_path.name}-course"
    (course / "solutions").mkdir(parents=True)
    (course / "solutions" / "lab99_sample.ipynb").write_text(json.dumps(_sample(last=ERRORING_CELL)))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "eoslab.cli",
            "grade",
            "--class",
            str(tmp_path),
            "--course",
            str(course),
            "--rerun",
            "--limit",
            "120",
            "--cell-timeout",
            str(CELL_TIMEOUT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    book = (tmp_path / "gradebook.csv").read_text().splitlines()
    assert book[0].startswith("learner,notebook,score")
    assert any(line.startswith("ana,lab99_sample.ipynb,2") for line in book), book
    assert any(line.startswith("bo,") for line in book)


def test_class_accepts_notebooks_or_reports_and_flags_a_borrowed_report(tmp_path):
    """ana hands in only her notebook (graded now); bo hands in his own notebook with ana's report."""
    from eoslab.classroom import collect, summary

    ana, bo = tmp_path / "ana", tmp_path / "bo"
    ana.mkdir()
    bo.mkdir()
    (ana / "lab99_sample.ipynb").write_text(json.dumps(_sample(last=ERRORING_CELL)))
    lab = lab_from_solution(_sample(last=ERRORING_CELL))
    (bo / "lab99_sample.ipynb").write_text(json.dumps(lab))
    graded = grade_notebook(ana / "lab99_sample.ipynb", cell_timeout=CELL_TIMEOUT, write=False)
    borrowed = {**graded.to_json(), "notebook": "lab99_sample.ipynb"}
    (bo / "lab99_sample.report.json").write_text(json.dumps(borrowed))

    rows = {r["learner"]: r for r in collect(tmp_path, cell_timeout=CELL_TIMEOUT, limit=300, progress=lambda _: None)}
    assert (ana / "lab99_sample.report.json").is_file()  # her notebook was graded here
    assert rows["ana"]["score"] == 2 and rows["ana"]["sha256 check"] == "ok" and rows["ana"]["error"] == ""
    assert rows["bo"]["sha256 check"] == "mismatch" and "does not match its report" in rows["bo"]["error"]
    assert "bo: lab99_sample.ipynb does not match" in summary(list(rows.values()))
