"""Writing a test's input records and knowing they landed.

``Producer.flush()`` returning 0 says the producer's queue is empty, not that the records were written: a
record that failed (a topic that does not exist: the course's brokers run with
``auto.create.topics.enable=false``; a timeout) leaves the queue too, through a delivery report carrying the
error. A test that reads its input back later then fails far from the cause, or reads nothing and passes.
:func:`produce_all` checks each record's delivery report instead, with the kit's :func:`eoslab.clients.write_all`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from confluent_kafka import Producer

from eoslab.clients import write_all
from eoslab.errors import ClientError

FLUSH = 30.0
"""Seconds for the records' delivery reports: a batch on a 6-node cluster on 2 cores answers in well under 1 s."""


def produce_all(producer: Producer, topic: str, records: Iterable[bytes | dict[str, Any]], **produce: Any) -> list[int]:
    """:func:`eoslab.clients.write_all` for a test: each record's offset, in the order of the reports.

    Raises AssertionError with the kit's sentence: the first failed delivery report's error (e.g.
    ``_MSG_TIMED_OUT``) or the count of reports missing after :data:`FLUSH` seconds.
    """
    try:
        return [offset for _, offset in write_all(producer, topic, records, timeout=FLUSH, **produce)]
    except ClientError as e:
        raise AssertionError(str(e)) from None
