"""The kit's writer (eoslab.clients.write_all) and the integration tests' (tests/integration/_produce.py) fail on
records that were not written, which ``flush() == 0`` does not: one sentence saying what to do."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from eoslab._ports import free_port
from eoslab.clients import write_all
from eoslab.errors import ClientError
from tests.integration._produce import produce_all


def _unreachable(**conf: object) -> Producer:
    """A producer whose bootstrap port nothing listens on: every record fails once ``message.timeout.ms`` ends."""
    return Producer(
        {"bootstrap.servers": f"127.0.0.1:{free_port()}", "message.timeout.ms": 300, "log_level": 0, **conf}
    )


def test_flush_returns_zero_for_records_that_failed() -> None:
    producer = _unreachable()
    producer.produce("t", b"x")
    assert producer.flush(10) == 0  # the queue is empty: the record left it as a failed delivery report


def test_produce_all_names_the_records_that_were_not_written() -> None:
    with pytest.raises(AssertionError, match=r"2 of 2 records to t were not written \(_MSG_TIMED_OUT\)"):
        produce_all(_unreachable(), "t", [b"a", {"value": b"b", "key": b"k"}])


def test_the_kits_writer_says_in_one_sentence_what_failed_and_what_to_do() -> None:
    with pytest.raises(ClientError) as failed:
        write_all(_unreachable(), "orders", [b"a", b"b", b"c"], partition=0)
    said = str(failed.value)
    assert (
        said
        == "3 of 3 records to orders were not written (_MSG_TIMED_OUT): run eoslab.heal(cluster), then the cell again."
    )


def test_the_kits_writer_counts_reports_that_did_not_come() -> None:
    producer = _unreachable(**{"message.timeout.ms": 60000})  # each record is retried for a minute
    with pytest.raises(ClientError, match=r"^2 of 2 records to t had no answer after 0.2 s: run eoslab.heal"):
        write_all(producer, "t", [b"a", b"b"], timeout=0.2)
    producer.purge()  # nothing left queued behind the test
