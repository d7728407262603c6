"""How a learner's loop gets from a notebook cell into the pipeline's process: write_loop and load_loop,
without a cluster (the loop running under faults is tests/integration/test_lab05.py's)."""

from __future__ import annotations

import linecache
from pathlib import Path
from typing import Any, cast

import pytest

from eoslab.demos.pipeline import LOOP_HEADER, PipelineError, load_loop, write_loop

NOTEBOOK_HELPER = 42


def _cell(source: str, name: str) -> dict[str, Any]:
    """Run ``source`` as IPython runs a cell: its text kept in linecache so inspect finds it."""
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(source, name, "exec"), ns)  # a test's own cell
    return ns


def test_a_loop_from_a_cell_is_written_with_the_header_and_loads_in_another_module(tmp_path: Path) -> None:
    ns = _cell(
        "import time\n"
        "def run(pipe):\n"
        "    import json\n"
        "    def inner(x):\n"
        "        return KafkaError, TopicPartition, json.dumps(x), len(x)\n"
        "    try:\n"
        "        pipe.producer.init_transactions()\n"
        "    except KafkaException:\n"
        "        time.sleep(0)\n"
        "    return inner([1])\n",
        "<cell-1>",
    )
    spec = write_loop(ns["run"], tmp_path)
    path, name = spec.rsplit(":", 1)
    assert name == "run" and path.endswith(".py")
    text = open(path).read()
    assert text.count(LOOP_HEADER[0]) == 1 and "def run(pipe):" in text
    fn = load_loop(spec)
    assert fn.__module__ != "__main__" and fn.__name__ == "run"

    class Pipe:
        class producer:  # stands for the pipe's producer attribute
            @staticmethod
            def init_transactions() -> None:
                return None

    kafka_error, _, dumped, n = fn(cast(Any, Pipe()))  # a stand-in for the pipe: only its producer is used
    assert kafka_error.__name__ == "KafkaError" and dumped == "[1]" and n == 1


def test_a_loop_using_a_name_from_elsewhere_in_the_notebook_is_refused_with_the_name() -> None:
    ns = _cell("limit = 3\ndef run(pipe):\n    return limit + helper()\n", "<cell-2>")
    with pytest.raises(PipelineError, match=r"uses helper, limit from the notebook"):
        write_loop(ns["run"], "/nonexistent")


def test_a_function_without_source_and_a_non_function_are_refused(tmp_path: Path) -> None:
    ns: dict[str, Any] = {}
    exec(compile("def run(pipe):\n    pass\n", "<nowhere>", "exec"), ns)  # no linecache entry
    with pytest.raises(PipelineError, match="cannot be found"):
        write_loop(ns["run"], tmp_path)
    with pytest.raises(PipelineError, match="is not a function"):
        write_loop(print, tmp_path)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-colon", "give 'path/to/file.py:function'"),
        ("/nonexistent/loop.py:run", "there is no file"),
        ("json:no_such_function", "has no function 'no_such_function'"),
    ],
)
def test_bad_loop_specs_say_what_to_give(spec: str, message: str) -> None:
    with pytest.raises(PipelineError, match=message):
        load_loop(spec)


def test_a_loop_file_with_a_syntax_error_says_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "loop.py"
    bad.write_text("def run(pipe):\n    while True\n        pass\n")
    with pytest.raises(PipelineError, match="line 2"):
        load_loop(f"{bad}:run")


def test_a_module_function_loads() -> None:
    assert load_loop("json:dumps").__name__ == "dumps"
