"""The class rerun runs the course's check cells, never the learner's (no cluster, no kernel): graded cells
restored by id from the instructor's lab, notebooks whose graded cells do not match refused, cells that
change the kit instead of answering flagged as tampering, and the cell outcomes kept from the notebook."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from _classroom import CHECK, FakeNbval, book_rows, instructor_course, notebook, quiet

from eoslab.classroom import _rerun, _trusted, grade_class, lab_from_solution
from eoslab.errors import GradingError
from eoslab.labcheck import _nbval_plugin

ROOT = Path(__file__).resolve().parents[1].parent
LAB = "lab03_transactions.ipynb"


def _solution(name: str = LAB) -> dict[str, Any]:
    nb: dict[str, Any] = json.loads((ROOT / "solutions" / name).read_text())
    return nb


def _lab() -> dict[str, Any]:
    return _trusted.instructor_lab(ROOT, LAB)


def _cell(nb: dict[str, Any], cell_id: str) -> dict[str, Any]:
    return next(c for c in nb["cells"] if c.get("id") == cell_id)


T1_CHECK, T1_ANSWER = "81c522b4", "4e75358c"  # lab 03: its task 1's graded cell, and the cell before it


# -- restoring the check cells -----------------------------------------------------------------------------


def test_the_instructors_lab_is_the_solution_made_into_a_lab_else_the_labs_copy(tmp_path: Path) -> None:
    assert _lab() == lab_from_solution(_solution())
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / "lab03_other_name.ipynb").write_text(json.dumps({"cells": [CHECK]}))
    assert _trusted.instructor_lab(tmp_path, LAB) == {"cells": [CHECK]}  # by its lab number, not its full name
    with pytest.raises(GradingError, match=r"has no lab04 in solutions/ or labs/: .* give the course .* --course"):
        _trusted.instructor_lab(tmp_path, "lab04_read_committed.ipynb")
    with pytest.raises(GradingError, match="is not named after a lab"):
        _trusted.instructor_lab(tmp_path, "notes.ipynb")
    with pytest.raises(GradingError, match="holds no solutions/ or labs/ with lab notebooks: .* --course"):
        _trusted.check_course(tmp_path / "elsewhere")


def test_an_edited_check_cell_and_its_metadata_are_the_courses_again() -> None:
    nb = _solution()
    check = _cell(nb, T1_CHECK)
    check["source"] = "from eoslab.grading import verdict\nverdict('t1', True, ok='trust me')"
    check["metadata"]["eoslab"]["grade"]["points"] = 50
    check["metadata"]["tags"] = ["raises-exception"]
    check["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "✔ t1"}]
    _cell(nb, T1_ANSWER)["source"] = "def find_coordinator(leaders, key, kind):\n    return 1\n"

    restored = _trusted.restore(nb, _lab(), LAB)

    assert _cell(restored, T1_CHECK) == {**_cell(_lab(), T1_CHECK), "outputs": [], "execution_count": None}
    assert _cell(restored, T1_ANSWER)["source"].endswith("return 1\n")  # the learner's answer stays theirs
    assert [c.get("id") for c in restored["cells"]] == [c.get("id") for c in nb["cells"]]
    assert _cell(nb, T1_CHECK)["metadata"]["eoslab"]["grade"]["points"] == 50  # the hand-in itself is untouched


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda nb: nb["cells"].remove(_cell(nb, T1_CHECK)), f"its graded cell {T1_CHECK} is missing"),
        (lambda nb: _cell(nb, T1_CHECK).update(id="c0ffee00"), f"its graded cell {T1_CHECK} is missing"),
        (
            lambda nb: nb["cells"].append({**copy.deepcopy(_cell(nb, T1_CHECK)), "id": "extra123"}),
            r"its graded cell extra123 is not in the course's lab \(the ids do not match\)",
        ),
        (lambda nb: _cell(nb, T1_ANSWER).update(id=T1_CHECK), f"cell ids {T1_CHECK} appear more than once"),
        (lambda nb: [c.pop("id") for c in nb["cells"]], "its graded cells .* are missing"),
    ],
)
def test_a_notebook_whose_graded_cells_do_not_match_the_course_is_refused_in_one_sentence(
    change: Any, says: str
) -> None:
    nb = _solution()
    change(nb)
    with pytest.raises(GradingError) as refused:
        _trusted.restore(nb, _lab(), LAB)
    message = str(refused.value)
    assert message.startswith(f"{LAB} cannot be graded: ") and message.count(". ") == 0, message
    assert re.search(says, message), message


# -- tampering ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "why"),
    [
        ("lab03.check_coordinators = lambda cluster, f: None", "assigns lab03.check_coordinators, a part of the kit"),
        ("setattr(lab03, 'check_visible', print)", "assigns lab03.check_visible, a part of the kit"),
        ("vars(lab03)['check_visible'] = print", r"assigns vars\(lab03\)\['check_visible'\]"),
        ("from eoslab.labcheck import _checks\n_checks.verdict = print", "assigns _checks.verdict"),
        ("from eoslab.grading import verdict\nverdict.__defaults__ = ()", "assigns verdict.__defaults__"),
        (
            "import eoslab.m03_transactions.lab as g\ng.check_visible.__code__ = (lambda: 0).__code__",
            "assigns g.check_visible",
        ),
        ("del eoslab.grading", "assigns eoslab.grading"),
        ("cluster.partitions = lambda topic=None: []", "assigns cluster.partitions"),
        (
            "import sys\nsys.modules['eoslab.m03_transactions.lab'] = object()",
            "the modules the checks are imported from",
        ),
        ("lab03 = type('Fake', (), {})", "rebinds lab03, the name its check cells call"),
        ("from eoslab.grading import lab04 as lab03", "rebinds lab03"),
        ("def f():\n    global lab03\n    lab03 = None", "declares global lab03"),
        ("%time lab03.check_visible = print", "assigns lab03.check_visible"),
        ("exec('lab03.check_visible = print')", r"runs code from a string \(exec\)"),
        ("import os\nopen(os.environ['EOSLAB_GRADE_LOG'], 'a')", r"names the grader's own record of the run"),
    ],
)
def test_a_cell_that_changes_the_kit_instead_of_answering_is_tampering(cell: str, why: str) -> None:
    nb = _solution()
    _cell(nb, T1_ANSWER)["source"] = cell
    found = _trusted.tampering(_trusted.restore(nb, _lab(), LAB), _lab())
    assert len(found) >= 1 and found[0].startswith(f"cell {T1_ANSWER} "), found
    assert re.search(why, found[0]), found


@pytest.mark.parametrize(
    "cell",
    [
        "import eoslab.m03_transactions.lab as lab03",  # the same module again
        "from eoslab.m03_transactions import lab as lab03",
        "cluster = eoslab.connect()\ncluster_name = 'x'",
        "producer = make()\nproducer.x = 1",  # the learner's own objects are theirs
        "def transfer(producer, consumer, records, out_topic):\n    producer.flag = True",
    ],
)
def test_answers_and_setups_are_not_tampering(cell: str) -> None:
    nb = _solution()
    _cell(nb, T1_ANSWER)["source"] = cell
    assert _trusted.tampering(_trusted.restore(nb, _lab(), LAB), _lab()) == []


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "solutions").glob("lab*.ipynb")))
def test_no_solution_and_no_untouched_lab_is_tampering(name: str) -> None:
    lab = _trusted.instructor_lab(ROOT, name)
    for folder in ("solutions", "labs"):
        nb = json.loads((ROOT / folder / name).read_text())
        assert _trusted.tampering(_trusted.restore(nb, lab, name), lab) == []


# -- the class rerun ---------------------------------------------------------------------------------------


class Recording:
    """FakeNbval, keeping also the graded cell each notebook was run with."""

    def __init__(self) -> None:
        self.fake = FakeNbval()
        self.checks: list[dict[str, Any]] = []

    def __call__(self, path: Path, *, timeout: float, cell_timeout: int, write: bool, env: Any = None) -> Any:
        self.checks.append(json.loads(path.read_text())["cells"][0])
        return self.fake(path, timeout=timeout, cell_timeout=cell_timeout, write=write, env=env)


def test_the_rerun_runs_the_courses_check_cells_and_scores_tampering_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    course = instructor_course(tmp_path / "course")
    klass = tmp_path / "class"
    edited = {
        **CHECK,
        "source": "verdict('t1', True, ok='')",
        "metadata": {"eoslab": {"grade": {"task": "t1", "points": 99}}},
    }
    patch = {
        "cell_type": "code",
        "id": "p1",
        "metadata": {},
        "source": "import eoslab.m01_idempotence.lab as lab\nlab.check_survives_ack_loss = print",
        "outputs": [],
    }
    for who, nb in (
        ("ana", notebook(42, edited)),
        ("bo", json.dumps({**json.loads(notebook(42)), "cells": [patch, CHECK]})),
        ("cy", json.dumps({**json.loads(notebook(42)), "cells": []})),
    ):
        (klass / who).mkdir(parents=True)
        (klass / who / "lab01_a.ipynb").write_text(nb)
    nbval = Recording()
    monkeypatch.setattr(_rerun, "grade_notebook", nbval)

    grade_class(klass, course=course, workers=0, progress=quiet)

    assert nbval.fake.calls == ["ana/lab01_a.ipynb"] and nbval.checks == [CHECK]  # bo's and cy's never ran
    rows = book_rows(klass)
    assert (rows[("ana", "lab01_a.ipynb")]["score"], rows[("ana", "lab01_a.ipynb")]["max_score"]) == ("2.0", "2.0")
    bo, cy = rows[("bo", "lab01_a.ipynb")], rows[("cy", "lab01_a.ipynb")]
    assert bo["score"] == "0" and bo["error"].startswith("tampered: cell p1 assigns lab.check_survives_ack_loss")
    assert bo["error"].endswith(": this lab scores 0.")
    assert cy["score"] == "0" and "its graded cell c1 is missing" in cy["error"]
    assert json.loads((klass / "ana" / "lab01_a.ipynb").read_text())["cells"][0] == edited  # the hand-in as handed


def test_a_course_without_labs_is_refused_before_anything_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "class" / "ana").mkdir(parents=True)
    monkeypatch.setattr(_rerun, "grade_notebook", FakeNbval())
    with pytest.raises(GradingError, match="holds no solutions/ or labs/"):
        grade_class(tmp_path / "class", course=tmp_path / "nowhere", workers=0, progress=quiet)
    assert not (tmp_path / "class" / "gradebook.csv").exists()


# -- the outcomes are the grader's ---------------------------------------------------------------------------


class _Report:
    when, outcome, longrepr, duration = "call", "passed", None, 0.1


class _Item:
    nodeid = "lab.ipynb::Cell 0"
    cell = {"id": "c1", "metadata": {"eoslab": {"grade": {"task": "t1"}}}}


class _Outcome:
    def get_result(self) -> _Report:
        return _Report()


def test_the_kernel_never_sees_where_outcomes_go_and_what_it_writes_there_is_overwritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "outcomes.jsonl"
    monkeypatch.setenv(_nbval_plugin.OUTCOMES_ENV, str(path))
    _nbval_plugin.pytest_configure(None)
    assert _nbval_plugin.OUTCOMES_ENV not in os.environ  # a kernel started now does not inherit it
    hook = _nbval_plugin.pytest_runtest_makereport(_Item(), None)
    next(hook)
    with pytest.raises(StopIteration):
        hook.send(_Outcome())
    path.write_text('{"cell_id": "c1", "outcome": "passed"}\n' * 3)  # a learner's cell forging outcomes
    _nbval_plugin.pytest_sessionfinish(None, 0)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["cell_id"], r["outcome"], r["nodeid"]) for r in rows] == [("c1", "passed", "lab.ipynb::Cell 0")]
