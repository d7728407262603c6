"""The integration tests' input writer fails on records that were not written, which ``flush() == 0`` does not."""

from __future__ import annotations

import pytest
from confluent_kafka import Producer

from eoslab._ports import free_port
from tests.integration._produce import produce_all


def _unreachable(**conf: object) -> Producer:
    """A producer whose bootstrap port nothing listens on: every record fails once ``message.timeout.ms`` ends."""
    return Producer({"bootstrap.servers": f"127.0.0.1:{free_port()}", "message.timeout.ms": 300, **conf})


def test_flush_returns_zero_for_records_that_failed() -> None:
    producer = _unreachable()
    producer.produce("t", b"x")
    assert producer.flush(10) == 0  # the queue is empty: the record left it as a failed delivery report


def test_produce_all_names_the_records_that_were_not_written() -> None:
    with pytest.raises(AssertionError, match=r"2 of 2 records to 't' were not written: .*MSG_TIMED_OUT"):
        produce_all(_unreachable(), "t", [b"a", {"value": b"b", "key": b"k"}])
