"""Lab 03's task 5 gives the learner's ``process_once`` a commit timeout per fault that makes each fault what the task
says it is: a retriable commit timeout for the late EndTxn answer, an abortable error from ONE commit call for the lost
records (a commit timed out while its records time out leaves librdkafka's commit running, and its late result can
come back as the answer of the abort that follows: eoslab/m03_transactions/lab.py, T5_COMMIT_TIMEOUT_S)."""

from __future__ import annotations

from eoslab.m03_transactions import lab as lab03


def test_the_late_answer_outlasts_the_commit_and_the_lost_records_time_out_within_it() -> None:
    timeout = lab03.T5_COMMIT_TIMEOUT_S
    assert set(timeout) == {"late EndTxn answer", "lost Produce requests"}
    assert timeout["late EndTxn answer"] < lab03.T5_ENDTXN_HELD_S  # the commit times out: call it again
    message_timeout_s = lab03.T5_PRODUCER["message.timeout.ms"] / 1000
    # the records fail inside the one commit call, with room for a slow machine's timeout scan (~1 s a round)
    assert timeout["lost Produce requests"] >= 10 * message_timeout_s
    assert lab03.T5_PRODUCER["transaction.timeout.ms"] / 1000 > message_timeout_s + lab03.T5_ENDTXN_HELD_S
