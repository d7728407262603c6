"""Every graded check fails plausible wrong answers, with a hint: ONE test over every lab.

A row is a wrong answer as a learner would type it: the code that replaces the
``### BEGIN SOLUTION ... ### END SOLUTION`` region of the task's answer cell in
``solutions/labNN_*.ipynb``. The harness runs the LAB's own cells (setup and the
untouched TODO stubs) once per lab, then, for each row, the answer cell with the
wrong code and the task's graded cell, as the learner's kernel would. The row
passes when the check raises :class:`~eoslab.grading.CheckFailed` for THAT task
with a hint, and the check judged the answer rather than crashed (the ``guarded``
sentence "finish the TODO cell" is refused unless the row expects it).

Rows live in ``wrong_answers/labNN.py`` as ``ROWS = [(task, what is wrong, code,
regex the message must match or None), ...]``: a new lab adds its file, nothing
here changes. That every solution passes is tested by each lab's own
``test_solution_scores_full_marks``.
"""

from __future__ import annotations

import importlib.util
import json
import linecache
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from eoslab.labcheck import CheckFailed, graded_cells

ROOT = Path(__file__).resolve().parents[2]
ROWS_DIR = Path(__file__).resolve().parent / "wrong_answers"
BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$", re.M)
END = re.compile(r"^\s*### END SOLUTION\s*$", re.M)
CRASHED = "finish the TODO cell above"

pytestmark = [pytest.mark.cluster, pytest.mark.destructive]


def _rows() -> list[Any]:
    params = []
    for path in sorted(ROWS_DIR.glob("lab*.py")):
        spec = importlib.util.spec_from_file_location(f"wrong_answers_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for task, why, code, match in module.ROWS:
            slug = re.sub(r"[^a-z0-9]+", "-", why.lower()).strip("-")[:40]
            params.append(pytest.param(path.stem, task, code, match, id=f"{path.stem}-{task}-{slug}"))
    return params


def _source(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _notebook(folder: str, lab: str) -> dict[str, Any]:
    (path,) = (ROOT / folder).glob(f"{lab}_*.ipynb")
    return json.loads(path.read_text())


def with_answer(source: str, code: str) -> str:
    """``source`` with its one solution region replaced by ``code``, indented like the region."""
    begin, end = BEGIN.search(source), END.search(source)
    assert begin and end, "an answer cell has exactly one '### BEGIN/END SOLUTION' region"
    body = textwrap.indent(textwrap.dedent(code).strip("\n"), begin.group(1))
    return source[: begin.start()] + body + source[end.end() :]


def answer_cell(solution: dict[str, Any], task: str) -> tuple[str, str]:
    """(answer cell source, graded cell source) of ``task``: the region-holding cell before its check."""
    cells = [c for c in solution["cells"] if c["cell_type"] == "code"]
    graded = {c["cell_id"]: c["task"] for c in graded_cells(solution)}
    check = next(c for c in cells if graded.get(c["id"]) == task)
    before = cells[: cells.index(check)]
    answers = [c for c in reversed(before) if c["id"] not in graded and BEGIN.search(_source(c))]
    assert answers, f"{task} has no answer cell with a solution region before its check"
    return _source(answers[0]), _source(check)


def compiled(source: str, name: str) -> Any:
    """``compile`` as IPython does it for a cell: the source stays in ``linecache`` under ``name``, so
    ``inspect.getsource`` finds a function the cell defines (lab 05's check writes it to a file)."""
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    return compile(source, name, "exec")


_LAB_STATE: dict[str, dict[str, Any]] = {}
_LAB_BROKEN: dict[str, str] = {}
"""A lab whose own cells were cut off in an earlier row (its guard's timeout, an error): what cut them off."""


def lab_namespace(lab: str) -> dict[str, Any]:
    """The kernel state after running the untouched lab's cells except its checks (once per lab).

    Cut off halfway (run 83: lab 06's first row hit its 300 s guard inside a py4j call), the lab's cells leave
    this process's Spark gateway out of step, and every later row of the lab failed with py4j's errors instead
    of its own; so a later row fails at once, naming the row's failure to read."""
    if lab in _LAB_BROKEN:
        pytest.fail(f"{lab}'s own cells were cut off in an earlier row ({_LAB_BROKEN[lab]}): read that row's failure")
    if lab not in _LAB_STATE:
        nb = _notebook("labs", lab)
        graded = {c["cell_id"] for c in graded_cells(nb)}
        ns: dict[str, Any] = {"__name__": "__main__"}
        try:
            for cell in nb["cells"]:
                if cell["cell_type"] == "code" and cell["id"] not in graded:
                    exec(compiled(_source(cell), f"<{lab}:{cell['id']}>"), ns)  # the lab's own cells
        except BaseException as e:  # pytest-timeout's Failed too
            _LAB_BROKEN[lab] = f"{type(e).__name__}: {str(e)[:200]}"
            raise
        _LAB_STATE[lab] = ns
    return _LAB_STATE[lab]


@pytest.mark.parametrize(("lab", "task", "code", "match"), _rows())
def test_wrong_answer_fails_its_task_with_a_hint(healed, lab, task, code, match):
    answer, check = answer_cell(_notebook("solutions", lab), task)
    ns = dict(lab_namespace(lab))
    exec(compiled(with_answer(answer, code), f"<{lab}:{task} answer>"), ns)  # the row's answer
    with pytest.raises(CheckFailed) as failed:
        exec(compiled(check, f"<{lab}:{task} check>"), ns)  # the lab's check cell
    message = str(failed.value)
    assert message.startswith(f"{task}: ") and " Hint: " in message, message
    if match is None or not re.search(re.escape(CRASHED), match):
        assert CRASHED not in message, f"the check crashed instead of judging the answer: {message}"
    if match is not None:
        assert re.search(match, message), message


UNSTARTED = r"still (None, as the lab left it|the lab's TODO stub)"


@pytest.mark.parametrize("lab", ["lab06"])
def test_the_untouched_lab_refuses_every_check_at_once(healed, lab):
    """The untouched lab's checks, each in the state the lab's own cells leave (its TODOs): every graded task
    fails, saying the answer is still the lab's TODO (``labcheck._not_started``), before any experiment. Lab 06's is
    here, in the kernel state its wrong answers already set up, not in a Spark kernel of its own (labs 01-05 grade
    their untouched lab through ``grade_notebook`` in test_labNN.py)."""
    nb = _notebook("labs", lab)
    checks = {c["id"]: _source(c) for c in nb["cells"] if c["cell_type"] == "code"}
    tasks = {c["cell_id"]: c["task"] for c in graded_cells(nb)}
    assert tasks and set(tasks) <= set(checks)
    for cell_id, task in tasks.items():
        ns = dict(lab_namespace(lab))
        with pytest.raises(CheckFailed) as failed:
            exec(compiled(checks[cell_id], f"<{lab}:{task} check>"), ns)
        message = str(failed.value)
        assert message.startswith(f"{task}: ") and re.search(UNSTARTED, message), message
