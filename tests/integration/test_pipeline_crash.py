"""Module 05's processors on the real cluster, each crashed at a known point and restarted, judged by
the history checker.

The crash is deterministic: ``die_at="after-produce:3"`` makes the processor SIGKILL itself once the
outputs of its third batch are acknowledged and before that batch's input offsets are committed
(eos: inside the open transaction). So the EOS processor must come out clean (its restarted
incarnation fences the old producer, the open transaction is aborted, the batch is redone inside a
new one) and the at-least-once twin must show duplicates (the batch's outputs are committed and
redone): the same crash, two verdicts, proof the checker can fail.

Timeouts: the restart waits for the killed member's session to expire (session.timeout.ms = 6 s)
before it is assigned; CATCH_UP (90 s) and EXIT_WAIT (30 s) in eoslab.demos.pipeline say why.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from eoslab.clients import producer
from eoslab.cluster import Cluster
from eoslab.demos.pipeline import BATCH, EXIT_FATAL, PipelineProcess, parse_output
from eoslab.history import Committed, Sent, check, read_both, read_final, read_history
from tests.integration._produce import produce_all

pytestmark = pytest.mark.cluster

INPUTS = 200  # 10 batches of 20 over two partitions: the crash at batch 3 leaves most of the work to the restart
CRASH_BATCH = 3
ASSIGNMENT = [[1, 2, 3], [2, 3, 1]]


@pytest.fixture
def topics(cluster: Cluster, topic_name: str) -> Iterator[tuple[str, str]]:
    src, out = f"{topic_name}-in", f"{topic_name}-out"
    for t in (src, out):
        cluster.admin.create_topic(t, replica_assignment=ASSIGNMENT)
    p = producer(cluster)
    records = [{"value": f"v{i}".encode(), "key": str(i).encode()} for i in range(INPUTS)]
    produce_all(p, src, [{**r, "partition": i % len(ASSIGNMENT)} for i, r in enumerate(records)])
    yield src, out
    for t in (src, out):
        cluster.admin.delete_topic(t)


def _crash_and_recover(
    cluster: Cluster, mode: str, src: str, out: str, tmp_path: Path, point: str = "after-produce"
) -> PipelineProcess:
    proc = PipelineProcess(cluster, mode, input=src, output=out, history_dir=tmp_path)
    try:
        proc.start(die_at=f"{point}:{CRASH_BATCH}")
        assert proc.wait_exit() == -9, proc.stderr()  # it killed itself: SIGKILL, no clean-up ran
        proc.start()
        proc.wait_caught_up()
        assert proc.stop() == 0, proc.stderr()
    finally:
        proc.kill()
    return proc


def _crashed_batch(proc: PipelineProcess) -> list[Sent]:
    """The first incarnation's acknowledged sends after its last commit: the batch the crash cut off."""
    events = read_history(proc.history(1)).events
    last_commit = max(i for i, e in enumerate(events) if isinstance(e, Committed))
    sends = [e for e in events[last_commit:] if isinstance(e, Sent)]
    assert sends and all(s.acked for s in sends), "the crash must come after the batch's outputs were acknowledged"
    assert sum(isinstance(e, Committed) for e in events) == CRASH_BATCH - 1
    return sends


@pytest.mark.parametrize("point", ["after-produce", "after-offsets"])
def test_eos_processor_killed_mid_transaction_and_restarted_is_exactly_once(
    cluster: Cluster, topics: tuple[str, str], tmp_path: Path, point: str
) -> None:
    src, out = topics
    proc = _crash_and_recover(cluster, "eos", src, out, tmp_path, point)
    cut = _crashed_batch(proc)
    assert {s.txn for s in cut} == {CRASH_BATCH} and len(cut) <= BATCH

    rc, ru = read_both(cluster, out)
    verdict = check(proc.histories(), (rc, ru), inputs=read_final(cluster, src, "read_committed"))
    assert verdict.valid(), str(verdict)
    assert "missing_output" in verdict.checked
    assert {
        n: verdict.count(n) for n in ("lost_write", "duplicate", "aborted_read", "missing_output")
    } == dict.fromkeys(("lost_write", "duplicate", "aborted_read", "missing_output"), 0)
    # The crash was mid-transaction: the cut batch's outputs are in the log (read_uncommitted), not committed.
    uncommitted = {r.value for r in ru.records}
    committed = {r.value for r in rc.records}
    assert all(s.value in uncommitted and s.value not in committed for s in cut)
    # Exactly one committed output per input, each traceable to it.
    assert len(rc.records) == INPUTS
    assert {parse_output(str(r.value)).source for r in rc.records} == {
        rc_in.at(r) for rc_in in [read_final(cluster, src, "read_committed")] for r in rc_in.records
    }


def test_at_least_once_twin_killed_after_produce_before_commit_duplicates(
    cluster: Cluster, topics: tuple[str, str], tmp_path: Path
) -> None:
    src, out = topics
    proc = _crash_and_recover(cluster, "alo", src, out, tmp_path)
    cut = _crashed_batch(proc)
    assert {s.txn for s in cut} == {None}

    verdict = check(proc.histories(), read_both(cluster, out), inputs=read_final(cluster, src, "read_committed"))
    # The cut batch was acknowledged (so committed: no transaction) and redone after the restart.
    assert verdict.count("duplicate") == len(cut), str(verdict)
    assert verdict.count("lost_write") == 0 and verdict.count("missing_output") == 0, str(verdict)
    assert verdict.count("aborted_read") == 0, str(verdict)


def test_a_paused_processor_is_alive_but_silent_and_goes_on_when_resumed(
    cluster: Cluster, topics: tuple[str, str], tmp_path: Path
) -> None:
    src, out = topics
    with PipelineProcess(cluster, "eos", input=src, output=out, history_dir=tmp_path) as proc:
        proc.start().wait_caught_up()
        proc.pause()
        assert proc.running and proc.state == psutil.STATUS_STOPPED
        events = len(read_history(proc.history()).events)
        assert proc.resume().stop() == 0, proc.stderr()  # SIGTERM: it finishes and leaves its group
        assert proc.returncode == 0 and len(read_history(proc.history()).events) >= events
    assert proc.histories() == [proc.history(1)]


def test_eos_processor_whose_transaction_timed_out_is_fenced_stops_and_its_restart_is_exactly_once(
    cluster: Cluster, topics: tuple[str, str], tmp_path: Path
) -> None:
    """Stalled past transaction.timeout.ms inside batch 2, the coordinator aborts the transaction and
    bumps the epoch; librdkafka then reports _FENCED (fatal) on send_offsets_to_transaction, so the
    processor stops with its fatal exit code and a restart carries on."""
    src, out = topics
    proc = PipelineProcess(cluster, "eos", input=src, output=out, history_dir=tmp_path, transaction_timeout_ms=2000)
    with proc:
        proc.start(stall_at="after-produce:2")
        assert proc.wait_exit() == EXIT_FATAL, proc.stderr()
        assert "_FENCED" in proc.stderr()
        events = read_history(proc.history(1)).events
        assert [e.txn for e in events if isinstance(e, Committed)] == [1]  # txn 2 never committed
        proc.start().wait_caught_up()
        assert proc.stop() == 0, proc.stderr()
    verdict = check(proc.histories(), read_both(cluster, out), inputs=read_final(cluster, src, "read_committed"))
    assert verdict.valid(), str(verdict)
    assert "missing_output" in verdict.checked
