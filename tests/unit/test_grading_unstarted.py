"""An answer still as the lab left it fails its task at once, before the check's experiment starts."""

from __future__ import annotations

import ast
import json
import linecache
from pathlib import Path
from typing import Any

import pytest

from eoslab.labcheck import CheckFailed, guarded, verdict
from eoslab.labcheck._not_started import stub_body, unstarted

ROOT = Path(__file__).resolve().parents[2]


def _define(source: str, name: str) -> Any:
    """``source``'s function as a kernel cell defines it (its source kept in linecache, as IPython does)."""
    filename = f"<cell {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    ns: dict[str, Any] = {}
    exec(compile(source, filename, "exec"), ns)
    return ns[name]


def _check(x: Any, y: Any = None) -> None:
    raise AssertionError("the experiment ran")


STUBS = [
    "def f(pid):\n    return None  # TODO\n",
    "def f(pid):\n    return (None, None)  # TODO\n",
    "def f(batches):\n    return []  # TODO: group them\n",
    "def f(a, b):\n    return {}  # TODO\n",
    "def f(p, c, r, t):\n    pass  # TODO: one transaction\n",
    'def f(x):\n    """what it should do"""\n    return\n',
    "def f(x):\n    return ()\n",
    "def f(x):\n    return ''\n",
]
WRITTEN = [
    "def f(pid):\n    return pid // 1000  # TODO left in place\n",
    "def f(batches):\n    out = []\n    return out\n",
    "def f(x):\n    return x or None\n",
    "def f(x):\n    print(x)\n",
    "def f(x):\n    raise NotImplementedError\n",
    "def f(replicas, isr, killed):\n    return 3  # a guess: the check judges it (wrong answer lab01 t3)\n",
    'def f(x):\n    return "a"\n',
    "def f(x):\n    return (None, 1)\n",
    "def f(x):\n    return [0]\n",
]


@pytest.mark.parametrize("source", STUBS)
def test_a_stub_is_named_before_the_experiment(source: str) -> None:
    saw = unstarted(_check, [_define(source, "f")], {})
    assert saw is not None and saw.startswith("f() still the lab's TODO stub"), saw


@pytest.mark.parametrize("source", WRITTEN)
def test_a_function_the_learner_wrote_goes_to_the_check(source: str) -> None:
    assert unstarted(_check, [_define(source, "f")], {}) is None


def test_none_counts_only_where_the_check_has_no_default() -> None:
    assert unstarted(_check, [None], {}) == "x still None, as the lab left it"
    assert unstarted(_check, [1, None], {}) is None  # y=None is the check's own default
    assert unstarted(_check, [1], {"y": None}) is None


def test_a_function_without_source_goes_to_the_check() -> None:
    ns: dict[str, Any] = {}
    exec(compile("def f(x):\n    return None\n", "<gone>", "exec"), ns)  # no linecache entry
    assert unstarted(_check, [ns["f"]], {}) is None


def test_guarded_fails_an_unstarted_answer_without_running_the_check() -> None:
    ran = []

    @guarded("t7", points=2)
    def check(cluster: object, fn: Any) -> Any:
        ran.append(1)
        return verdict("t7", fn(1) == 2, ok="ok", points=2)

    stub = _define("def g(x):\n    return None  # TODO\n", "g")
    with pytest.raises(CheckFailed) as failed:
        check(object(), stub)
    assert ran == []
    assert str(failed.value) == (
        "t7: saw g() still the lab's TODO stub (its body does nothing but `return None`). "
        "Hint: finish the TODO cell above, run it, then run this check again."
    )
    with pytest.raises(CheckFailed, match="saw fn still None"):
        check(object(), None)
    assert ran == []
    assert check(object(), _define("def h(x):\n    return x + 1\n", "h")).passed and ran == [1]


def _functions(folder: str) -> list[tuple[str, str, ast.FunctionDef]]:
    """(lab, cell id, def) of every function a lab's (or a solution's) own code cells define."""
    found = []
    for path in sorted((ROOT / folder).glob("lab*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                tree = ast.parse("\n".join(line for line in source.splitlines() if not line.startswith(("%", "!"))))
                found += [(path.stem, cell["id"], n) for n in tree.body if isinstance(n, ast.FunctionDef)]
    return found


def test_no_solution_answer_is_a_stub() -> None:
    """The rule can never fail a correct answer: no solution's function does nothing."""
    assert not [(lab, cid, fn.name) for lab, cid, fn in _functions("solutions") if stub_body(fn) is not None]


def test_every_lab_answer_function_ships_as_a_stub_but_lab_05s_loop() -> None:
    """So an untouched lab's checks answer at once; lab 05's cell is examples/eos_loop.py's program to finish: it
    runs as the lab gives it (its checks get ``run`` only), and only ``next_offsets`` is an empty stub."""
    started = sorted((lab, fn.name) for lab, _, fn in _functions("labs") if stub_body(fn) is None)
    lab05 = ["consumer_settings", "process", "producer_settings", "retried", "rewind", "run"]
    assert started == [("lab05_exactly_once_pipeline", name) for name in lab05]
