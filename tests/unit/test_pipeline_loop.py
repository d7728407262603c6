"""How a learner's loop gets from a notebook cell into the pipeline's process (write_loop, load_loop), and
what a processor records as an abort's cause, without a cluster (the loop under faults:
tests/integration/test_lab05.py; the abortable path: tests/integration/test_pipeline_abortable.py)."""

from __future__ import annotations

import json
import linecache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from eoslab.demos.pipeline import LOOP_HEADER, PipelineError, load_loop, write_loop
from eoslab.demos.pipeline._child import Processor, parse_args
from eoslab.demos.pipeline._loop import Pipe
from eoslab.demos.pipeline._parts import abort_reason
from eoslab.history import Aborted, HistoryWriter, Position, Sent, read_history

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


# -- what an abort records as its cause --------------------------------------------------------------
# librdkafka marks the transaction abortable on its own thread after a delivery failed, so the call that
# reports it may fail with the delivery's own error or with _STATE ("Failed to commit offsets to
# transaction ... Erroneous state"): seen once in a fresh-clone run of test_pipeline_abortable.


def _state_error() -> KafkaException:
    text = "Failed to commit offsets to transaction on broker (none): Local: Erroneous state (after 0 ms)"
    return KafkaException(KafkaError(KafkaError._STATE, text, txn_requires_abort=True))


class _Producer:
    """A transactional producer whose send_offsets_to_transaction fails as it did in that run."""

    def begin_transaction(self) -> None:
        return None

    def send_offsets_to_transaction(self, *args: Any) -> None:
        raise _state_error()

    def abort_transaction(self, *args: Any) -> None:
        return None


class _Message:
    """A consumed input record, as ``consume()`` returns it."""

    def topic(self) -> str:
        return "in"

    def partition(self) -> int:
        return 0

    def offset(self) -> int:
        return 0

    def value(self) -> bytes:
        return b"v"

    def key(self) -> None:
        return None


class _TimingOutProducer(_Producer):
    """Every produced record's delivery report says it timed out (served by flush, as librdkafka does)."""

    def __init__(self) -> None:
        self.reports: list[Any] = []

    def produce(self, *args: Any, on_delivery: Any, **kwargs: Any) -> None:
        self.reports.append(on_delivery)

    def flush(self, timeout: float) -> int:
        for report in self.reports:
            report(KafkaError(KafkaError._MSG_TIMED_OUT, "Local: Message timed out"), _Message())
        self.reports.clear()
        return 0


class _Processor:
    """The pieces of ``_child.Processor`` a Pipe uses."""

    def __init__(self, history: Path) -> None:
        self.args = SimpleNamespace(
            transactional_id="tid", bootstrap="127.0.0.1:1", input="in", output="out", group="g",
            history=str(history), transaction_timeout_ms=20000, message_timeout_ms=None, client_id="c",
        )  # fmt: skip
        self.process, self.kit_conf = "p-1", {"client.id": "c"}
        self.h = HistoryWriter(history, process="p-1")
        self.stopping, self.batch = False, 0
        self.die_at = self.stall_at = self.pause_at = None

    def die_if(self, point: str) -> None:
        return None


def test_a_learners_abort_records_the_failed_delivery_not_the_state_error_it_surfaced_as(tmp_path: Path) -> None:
    proc = _Processor(tmp_path / "h.jsonl")
    pipe = Pipe(cast(Any, proc))
    producer = pipe.producer({"bootstrap.servers": "127.0.0.1:1", "transactional.id": "tid"})
    timing_out = _TimingOutProducer()
    producer._producer = cast(Any, timing_out)  # every delivery times out; its send_offsets fails with _STATE
    producer.begin_transaction()
    producer.produce("out", pipe.output_value(_Message()), None)
    timing_out.flush(1)
    with pytest.raises(KafkaException):
        producer.send_offsets_to_transaction([TopicPartition("in", 0, 1)], None)
    producer.abort_transaction()
    proc.h.close()
    events = read_history(tmp_path / "h.jsonl").events
    (aborted,) = [e for e in events if isinstance(e, Aborted)]
    assert aborted.reason.startswith("_MSG_TIMED_OUT: Local: Message timed out (raised as _STATE:"), aborted
    (sent,) = [e for e in events if isinstance(e, Sent)]
    assert sent.source == Position("in", 0, 0) and sent.txn == 1 and sent.error == "_MSG_TIMED_OUT"
    saved = json.loads((tmp_path / "h.settings.json").read_text())
    assert saved == {"producer": {"bootstrap.servers": "127.0.0.1:1", "transactional.id": "tid"}}


def test_a_loop_is_written_with_the_notebooks_functions_it_calls(tmp_path: Path) -> None:
    ns = _cell(
        "def settings(group):\n"
        "    return {'group.id': group, 'enable.auto.commit': False}\n"
        "def offsets(records):\n"
        "    return [TopicPartition('in', 0, max(records) + 1)]\n"
        "def step(pipe):\n"
        "    return settings(pipe), offsets([1, 4])\n"
        "def unused():\n"
        "    return 0\n"
        "def run(pipe):\n"
        "    return step(pipe)\n",
        "<cell-helpers>",
    )
    spec = write_loop(ns["run"], tmp_path)
    text = open(spec.rsplit(":", 1)[0]).read()
    assert "def unused" not in text and text.index("def step") < text.index("def run")
    conf, [tp] = load_loop(spec)("g")
    assert conf == {"group.id": "g", "enable.auto.commit": False} and tp.offset == 5


def test_an_abort_without_a_failed_delivery_records_the_raised_error() -> None:
    assert abort_reason("ILLEGAL_GENERATION: stale", "") == "ILLEGAL_GENERATION: stale"
    assert abort_reason("_MSG_TIMED_OUT: t", "_MSG_TIMED_OUT: t") == "_MSG_TIMED_OUT: t"
    assert abort_reason("_STATE: s", "_MSG_TIMED_OUT: t") == "_MSG_TIMED_OUT: t (raised as _STATE: s)"


def test_the_built_in_processor_records_the_failed_delivery_as_its_aborts_cause(tmp_path: Path) -> None:
    args = parse_args(["--mode", "eos", "--bootstrap", "127.0.0.1:1", "--input", "in", "--output", "out",
                       "--group", "g", "--transactional-id", "tid", "--history", str(tmp_path / "h.jsonl"),
                       "--process", "eos"])  # fmt: skip
    proc = Processor(args)  # its clients are never used: the producer is replaced, rewind() too
    proc.consumer.close()  # nothing to connect to: stop its background connection attempts
    proc.consumer = cast(Any, SimpleNamespace(consumer_group_metadata=lambda: None))
    proc.producer = cast(Any, _TimingOutProducer())
    proc.rewind = lambda: None  # type: ignore[method-assign]
    proc.batch = 1
    proc.eos_batch(cast(Any, [_Message()]))
    proc.h.close()
    (aborted,) = [e for e in read_history(tmp_path / "h.jsonl").events if isinstance(e, Aborted)]
    assert aborted.reason.startswith("_MSG_TIMED_OUT: Local: Message timed out (raised as _STATE:"), aborted
