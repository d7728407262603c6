"""KAFKA-17754 on the real cluster (Kafka 4.4.0; first pinned down on 4.1.2), as this cluster decides it: a
request of transaction N delivered during transaction N+1 of the same producer.

What these tests pin down (observed, then asserted, so a change of behaviour fails loudly):

- librdkafka (original protocol, EndTxn v1): the coordinator ACCEPTS the late EndTxn(commit) of N
  during N+1 (NONE) and commits N+1 early, with the records N+1 had written; N+1's other records fail,
  the processor's abort gets INVALID_TXN_STATE (fatal in librdkafka), it stops (exit 3), its restart
  reprocesses N+1 from the committed offsets: the checker finds duplicates. The EOS processor is not
  exactly once under this fault.
- librdkafka, a late Produce: librdkafka never resent the lost one (its records failed at
  message.timeout.ms, 4 s here, the transaction was aborted with an epoch bump), so the replayed copy
  carries a stale epoch: INVALID_PRODUCER_EPOCH (47), nothing written, no anomaly.
- the Java 4.4 client (TV2: EndTxn v5, the epoch bumped by every EndTxn): the late EndTxn carries the
  epoch of N and is refused with PRODUCER_FENCED (90); the producer goes on, no anomaly.
- KIP-1228 (4.2): a late copy of a TV2 transaction's COMMIT marker, sent to the partition leader while the
  next transaction (same epoch) is open, is refused (INVALID_PRODUCER_EPOCH) when it says it is a TV2
  marker (WriteTxnMarkers v2), and taken by the old rule when it does not (v1): the next transaction's
  records so far become visible before it ends.

Timeouts: the experiments' own (transaction.timeout.ms 10 s -> socket.timeout.ms 9.9 s, STEP_WAIT),
in eoslab.demos.kafka17754. About 75 s together on a quiet machine.
"""

from __future__ import annotations

import threading

import psutil
import pytest

from eoslab import _procs
from eoslab.demos import kafka17754 as k17754
from eoslab.demos.kafka17754 import _librdkafka as k17754_librdkafka
from eoslab.demos.pipeline import EXIT_FATAL

pytestmark = pytest.mark.cluster


def test_librdkafka_a_late_endtxn_commits_the_next_transaction_early_and_duplicates(cluster, tmp_path):
    exp = k17754.delayed_endtxn(cluster, run_dir=tmp_path)
    assert exp.late_request["version"] <= 1 and exp.late_request["committed"] is True  # EndTxn v0-1: librdkafka
    assert exp.late_answer["error"] == "NONE", exp.notes  # the stale copy is taken for the open transaction
    assert EXIT_FATAL in exp.exits, exp.notes  # the abort that followed was refused: INVALID_TXN_STATE, fatal
    assert any("INVALID_TXN_STATE" in n for n in exp.notes), exp.notes
    assert exp.verdict is not None and exp.verdict.count("duplicate") > 0, str(exp.verdict)
    assert exp.verdict.count("lost_write") == 0 and exp.verdict.count("missing_output") == 0, str(exp.verdict)


def test_librdkafka_a_late_produce_is_refused_for_its_stale_epoch(cluster, tmp_path):
    exp = k17754.delayed_produce(cluster, run_dir=tmp_path)
    assert exp.late_answer["error"] == "INVALID_PRODUCER_EPOCH", exp.notes
    assert exp.verdict is not None and exp.verdict.valid(), str(exp.verdict)
    assert exp.verdict.stats["aborted txns"] >= 1  # librdkafka gave the lost records up and aborted
    # one incarnation from start to end: its abort (message.timeout.ms 4 s) came before the coordinator's
    # timeout abort (transaction.timeout.ms 10 s), which would have fenced it (_FENCED, fatal, exit 3)
    assert exp.exits == [0], exp.notes


def test_java_tv2_a_late_endtxn_is_fenced_and_changes_nothing(cluster, tmp_path):
    exp = k17754.delayed_endtxn_java(cluster, run_dir=tmp_path)
    assert exp.late_request["version"] >= 5  # EndTxn v5: transaction version 2
    assert exp.late_answer["error"] == "PRODUCER_FENCED", exp.notes
    assert exp.verdict is not None and exp.verdict.valid(), str(exp.verdict)
    assert exp.verdict.stats["committed txns"] == k17754.JAVA_TRANSACTIONS


def test_an_experiment_that_fails_midway_leaves_no_child_and_no_input_running(cluster, tmp_path, monkeypatch):
    """Whatever fails inside an experiment (here: right after the lost answer, with the processor and the
    input feeder running), the processor is killed and the feeder stops before the error reaches the caller."""

    def broken(p):
        raise RuntimeError("the history could not be read (this test's fault)")

    monkeypatch.setattr(k17754_librdkafka, "_commits", broken)
    with pytest.raises(RuntimeError, match="this test's fault"):
        k17754.delayed_endtxn(cluster, run_dir=tmp_path)
    assert _procs.adopted() == []
    left = [
        p.pid for p in psutil.process_iter(["cmdline"]) if any("k17754-endtxn" in a for a in p.info["cmdline"] or [])
    ]
    assert left == []
    assert not [t for t in threading.enumerate() if isinstance(t, k17754_librdkafka._Feeder)]


def test_kip_1228_a_late_tv2_marker_is_refused_by_the_partition_leader_and_the_old_rule_took_it(cluster):
    """N's COMMIT marker replayed to the leader while N+1 (same epoch: TV2 bumped it at N's EndTxn) is open.
    WriteTxnMarkers never passes the proxy (broker to broker): the kit sends the late copy itself."""
    new = k17754.stale_marker(cluster, version=2)  # TransactionVersion 2: what a 4.2+ coordinator sends
    assert new.answer == "INVALID_PRODUCER_EPOCH", new  # the epoch must be ABOVE the producer's
    assert new.seen_early == ("N",) and new.seen_at_end == ("N", "N+1, first half", "N+1, second half"), new
    old = k17754.stale_marker(cluster, version=1)  # no transaction version: judged by the pre-KIP-1228 rule
    assert old.answer == "NONE", old  # taken: an epoch not below the producer's was enough
    assert old.seen_early == ("N", "N+1, first half"), old  # N+1's first half committed before N+1 ended
