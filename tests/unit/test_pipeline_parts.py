"""The pipeline's pure pieces: error classification, the output value format, the transform, the crash hook.

The KafkaErrors here are built with the flags librdkafka sets on them (``fatal``, ``retriable``,
``txn_requires_abort``); what each real call raises is the integration tests' business.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import KafkaError

from eoslab.demos.pipeline import (
    DIE_POINTS,
    Action,
    PipelineError,
    PipelineProcess,
    classify,
    output_value,
    parse_args,
    parse_die_at,
    parse_output,
    transform,
)
from eoslab.history import Position

SRC = Position("orders-in", 1, 42)


@pytest.mark.parametrize(
    ("err", "action"),
    [
        # librdkafka's own fencing error: fatal, the producer is unusable
        (KafkaError(KafkaError._FENCED, "fenced", fatal=True), Action.STOP),
        # fatal wins over every other flag
        (KafkaError(KafkaError._STATE, "x", fatal=True, retriable=True, txn_requires_abort=True), Action.STOP),
        # the broker's fencing codes stop the processor even where a call reports them without the fatal flag
        (KafkaError(KafkaError.PRODUCER_FENCED, "fenced"), Action.STOP),
        (KafkaError(KafkaError.INVALID_PRODUCER_EPOCH, "old epoch"), Action.STOP),
        # a stale member epoch on TxnOffsetCommit (KIP-848): abortable
        (KafkaError(KafkaError.ILLEGAL_GENERATION, "stale", txn_requires_abort=True), Action.ABORT),
        # abortable wins over retriable: retrying the same call inside a doomed transaction cannot help
        (KafkaError(KafkaError._TIMED_OUT, "x", retriable=True, txn_requires_abort=True), Action.ABORT),
        # a commit that timed out: retry the commit (never abort: it may be durable already)
        (KafkaError(KafkaError._TIMED_OUT, "commit timed out", retriable=True), Action.RETRY),
        (KafkaError(KafkaError.COORDINATOR_LOAD_IN_PROGRESS, "loading", retriable=True), Action.RETRY),
        # none of the flags: an error the processor does not know; it stops rather than guess
        (KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART, "no topic"), Action.STOP),
    ],
    ids=lambda v: v.name() if isinstance(v, KafkaError) else str(v.value),
)
def test_classify_follows_librdkafkas_flags_fatal_first_then_abortable_then_retriable(
    err: KafkaError, action: Action
) -> None:
    assert classify(err) is action


def test_output_values_are_unique_per_send_and_name_their_input() -> None:
    a = output_value(SRC, "eos-1-123", 7, "hello")
    b = output_value(SRC, "eos-1-123", 8, "hello")  # the same input sent again by the same process
    c = output_value(SRC, "eos-2-456", 1, "hello")  # ... and by its restarted successor
    assert len({a, b, c}) == 3
    assert {parse_output(v).source for v in (a, b, c)} == {SRC}
    out = parse_output(a)
    assert (out.process, out.seq, out.result) == ("eos-1-123", 7, "HELLO")


def test_an_output_keeps_a_result_holding_the_separator() -> None:
    v = output_value(SRC, "p", 1, "a|b|c")
    assert parse_output(v).result == "A|B|C"
    assert parse_output(v).source == SRC


def test_transform_is_deterministic_and_handles_a_null_value() -> None:
    assert transform("abc") == transform("abc") == "ABC"
    assert transform(None) == ""


@pytest.mark.parametrize("bad", ["plain", "t|0|1|p|1", "t|x|1|p|1|R", "t|0|1|p|seven|R"])
def test_parse_output_rejects_what_the_pipeline_did_not_write(bad: str) -> None:
    with pytest.raises(PipelineError):
        parse_output(bad)


def test_a_process_name_with_the_separator_is_refused() -> None:
    with pytest.raises(PipelineError, match="choose one without it"):
        output_value(SRC, "a|b", 1, "v")


def test_parse_die_at() -> None:
    assert parse_die_at(None) is None
    assert parse_die_at("after-produce:3") == ("after-produce", 3)
    assert set(DIE_POINTS) == {"after-produce", "after-offsets", "after-commit"}
    for bad in ["after-produce", "after-produce:0", "after-produce:x", "nowhere:1", ":2"]:
        with pytest.raises(PipelineError):
            parse_die_at(bad)


def test_the_child_needs_a_transactional_id_in_eos_mode(capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--bootstrap", "b:1", "--input", "i", "--output", "o", "--group", "g", "--history", "h", "--process", "p"]
    assert parse_args(["--mode", "alo", *common]).transactional_id is None
    with pytest.raises(SystemExit):
        parse_args(["--mode", "eos", *common])
    assert "--transactional-id" in capsys.readouterr().err


def test_the_handle_refuses_a_bad_mode_or_crash_point_before_starting_anything(tmp_path: Path) -> None:
    with pytest.raises(PipelineError, match="mode="):
        PipelineProcess(None, "exactly-once", input="i", output="o", history_dir=tmp_path)  # type: ignore[arg-type]
    p = PipelineProcess(None, "eos", input="i", output="o", history_dir=tmp_path, name="n")  # type: ignore[arg-type]
    with pytest.raises(PipelineError, match="--die-at"):
        p.start(die_at="before-lunch:1")
    with pytest.raises(PipelineError, match="--die-at"):
        p.start(stall_at="after-produce")
    assert p.proc is None and p.incarnation == 0 and p.histories() == []
    assert (p.group, p.transactional_id) == ("pipeline-n", "pipeline-n")


def test_kill_ends_its_own_child_even_when_the_command_line_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run 81: a processor outlived its cell, and the cell's kill() waited 10 s (TimeoutExpired): the handle found
    its own child by pid AND command line, and the command-line read said no. Its own unreaped child needs no
    identity check: kill() must end it whatever /proc says of its command line."""
    import subprocess
    import sys

    import psutil

    def unreadable(self: psutil.Process) -> list[str]:
        raise psutil.AccessDenied(self.pid)

    p = PipelineProcess(None, "eos", input="i", output="o", history_dir=tmp_path, name="n")  # type: ignore[arg-type]
    p.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    monkeypatch.setattr(psutil.Process, "cmdline", unreadable)  # the identity read fails
    try:
        assert p.running and p.state is not None
        p.kill()
        assert not p.running and p.returncode is not None
    finally:
        if p.proc.poll() is None:
            p.proc.kill()
            p.proc.wait()
