"""A task cannot be passed by calling a kit function that computes its answer (no cluster).

The wrong answers of tests/integration/wrong_answers/*.py whose failure is "compute this yourself"
are run here for real: the lab's imports, the row's answer in the solution's answer cell, then the
lab's check cell. The check refuses them from the answer cell's source before it touches the cluster
(``cluster`` is None here), and ``eoslab grade``'s own reading of the notebook refuses them too.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from eoslab.labcheck import CheckFailed, _forbidden, scan, score

ROOT = Path(__file__).resolve().parents[2]
RULE = "compute this yourself"


def _harness() -> Any:
    spec = importlib.util.spec_from_file_location(
        "wrong_answers_harness", ROOT / "tests/integration/test_wrong_answers.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


H = _harness()
KIT_ROWS = [pytest.param(*p.values, id=p.id) for p in H._rows() if p.values[3] is not None and RULE in str(p.values[3])]


def _imports_of_the_lab(lab: str) -> dict[str, Any]:
    """The names the lab's cells import (nothing that needs a cluster), and ``cluster`` as None."""
    ns: dict[str, Any] = {"__name__": "__main__", "cluster": None}
    for cell in H._notebook("labs", lab)["cells"]:
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse(H._source(cell))
        imports: list[ast.stmt] = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        exec(compile(ast.Module(body=imports, type_ignores=[]), f"<{lab} imports>", "exec"), ns)
    return ns


def _check_call(check: str) -> tuple[str, list[str]]:
    call = ast.parse(check).body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
    func = scan.chain(call.value.func)
    assert func is not None
    return func[0], [a.id for a in call.value.args if isinstance(a, ast.Name)]


def test_the_harness_has_a_kit_row_for_every_lab_with_a_forbidden_function_answer() -> None:
    labs = {p.values[0] for p in KIT_ROWS}
    assert labs == {"lab01", "lab02", "lab03", "lab04", "lab05", "lab07"}


@pytest.mark.parametrize(("lab", "task", "code", "match"), KIT_ROWS)
def test_the_check_refuses_an_answer_cell_that_calls_the_kits_answer(
    lab: str, task: str, code: str, match: str
) -> None:
    answer, check = H.answer_cell(H._notebook("solutions", lab), task)
    ns = _imports_of_the_lab(lab)
    exec(H.compiled(H.with_answer(answer, code), f"<{lab}:{task} answer>"), ns)
    with pytest.raises(CheckFailed) as failed:
        exec(H.compiled(check, f"<{lab}:{task} check>"), ns)
    message = str(failed.value)
    assert message.startswith(f"{task}: ") and " Hint: " in message, message
    assert re.search(match, message), message
    assert re.search(rf"Hint: task {task} asks you to compute this yourself: do not (call|use) \S+\.$", message)


@pytest.mark.parametrize(("lab", "task", "code", "match"), KIT_ROWS)
def test_eoslab_grade_refuses_it_from_the_notebook_too(lab: str, task: str, code: str, match: str) -> None:
    nb = H._notebook("solutions", lab)
    answer, _ = H.answer_cell(nb, task)
    for cell in nb["cells"]:
        if H._source(cell) == answer:
            cell["source"] = H.with_answer(answer, code)
    refused = _forbidden.forbidden_answers(nb)
    assert task in refused and re.search(match, refused[task]), refused


@pytest.mark.parametrize("lab", ["lab01", "lab02", "lab03", "lab04", "lab05", "lab06", "lab07"])
def test_no_solution_and_no_untouched_lab_is_refused(lab: str) -> None:
    for folder in ("solutions", "labs"):
        assert _forbidden.forbidden_answers(H._notebook(folder, lab)) == {}
    if lab == "lab06":  # its answer cells run Spark as they define; it has no forbidden list (held-out runs)
        assert "eoslab.grading.lab06" not in _forbidden.FORBIDDEN
        return
    solution = H._notebook("solutions", lab)
    ns = _imports_of_the_lab(lab)
    for g in H.graded_cells(solution):
        answer, check = H.answer_cell(solution, g["task"])
        exec(H.compiled(answer, f"<{lab}:{g['task']} solution>"), ns)
        module, passed = _check_call(check)
        answers = [ns[name] for name in passed if name in ns]
        assert _forbidden.refusal(ns[module].__name__, g["task"], answers) is None


def test_every_forbidden_name_is_a_real_object_of_the_kit() -> None:
    for module, tasks in _forbidden.FORBIDDEN.items():
        assert scan.kit_object(module) is not None, module
        for task, entries in tasks.items():
            for entry in entries:
                if entry.startswith("eoslab."):
                    assert scan.kit_object(entry) is not None, f"{module} {task}: {entry}"


def _lab03_with(answer: str, *, before: str = "") -> dict[str, Any]:
    nb = H._notebook("solutions", "lab03")
    cell = next(c for c in nb["cells"] if "def find_coordinator" in H._source(c))
    cell["source"] = answer
    if before:
        at = nb["cells"].index(cell)
        nb["cells"].insert(at, {"cell_type": "code", "id": "helper", "metadata": {}, "source": before, "outputs": []})
    return nb


@pytest.mark.parametrize(
    ("answer", "before", "entry"),
    [
        (  # every spelling of one function is that function
            "import eoslab.inspect._coordinators as c\ndef find_coordinator(leaders, key, kind):\n"
            "    return leaders['__transaction_state'][c.coordinator_partition(key)]\n",
            "",
            "eoslab.inspect.coordinator_partition",
        ),
        (  # the helper defined in another cell is read too
            "def find_coordinator(leaders, key, kind):\n    return leaders['__transaction_state'][part(key)]\n",
            "from eoslab import inspect as I\npart = I.coordinator_partition\n",
            "eoslab.inspect.coordinator_partition",
        ),
        (
            "def find_coordinator(leaders, key, kind):\n    return leaders['__transaction_state'][part(key)]\n",
            "def part(key):\n    from eoslab.cluster import find_coordinators\n    return find_coordinators\n",
            "eoslab.cluster.find_coordinators",
        ),
        (  # inside a magic, IPython runs it too
            "%time from eoslab.inspect import kafka_abs\ndef find_coordinator(leaders, key, kind):\n    return 1\n",
            "",
            "eoslab.inspect.kafka_abs",
        ),
    ],
)
def test_grade_reads_every_spelling_and_the_helpers_an_answer_uses(answer: str, before: str, entry: str) -> None:
    refused = _forbidden.forbidden_answers(_lab03_with(answer, before=before))
    assert refused.get("t1", "").endswith(f"do not call {entry}."), refused


def test_a_value_answer_taken_from_the_kit_is_refused_by_grade() -> None:
    nb = H._notebook("solutions", "lab01")
    cell = next(c for c in nb["cells"] if "enable.idempotence" in H._source(c))
    cell["source"] = "from eoslab.clients import IDEMPOTENT_PRODUCER\nconf = dict(IDEMPOTENT_PRODUCER)\n"
    refused = _forbidden.forbidden_answers(nb)
    assert refused == {
        "t1": f"saw eoslab.clients.IDEMPOTENT_PRODUCER in cell {cell['id']}. Hint: task t1 asks you to compute "
        "this yourself: do not use eoslab.clients.IDEMPOTENT_PRODUCER."
    }


def test_an_exploring_cell_that_is_not_an_answer_is_not_refused() -> None:
    nb = H._notebook("solutions", "lab03")
    at = next(i for i, c in enumerate(nb["cells"]) if "def find_coordinator" in H._source(c))
    look = "from eoslab import inspect as ins\nins.coordinator_partition('my-txn-app')\n"
    nb["cells"].insert(at, {"cell_type": "code", "id": "look", "metadata": {}, "source": look, "outputs": []})
    assert _forbidden.forbidden_answers(nb) == {}


def test_a_refused_task_fails_whatever_its_check_said() -> None:
    nb = json.loads(json.dumps(H._notebook("solutions", "lab03")))
    graded = H.graded_cells(nb)
    outcomes = [
        {"cell_id": g["cell_id"], "outcome": "passed", "timeout": False, "xfail": False, "error_tail": ""}
        for g in graded
    ]
    verdicts = [{"task": g["task"], "passed": True, "message": "ok"} for g in graded]
    refused = {"t1": "saw eoslab.inspect.kafka_abs in cell x. Hint: task t1 asks you to compute this yourself."}
    tasks, _ = score(nb, outcomes, verdicts, refused=refused)
    t1 = next(t for t in tasks if t.task == "t1")
    assert (t1.passed, t1.points, t1.message) == (False, 0.0, refused["t1"])
    assert all(t.passed for t in tasks if t.task != "t1")
