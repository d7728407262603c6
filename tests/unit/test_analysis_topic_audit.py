"""Module 06's audit counts what each reader returned (no cluster): an aborted read is measured, not assumed."""

from __future__ import annotations

import pytest

from eoslab import analysis as A
from eoslab.bench.audit import COMMITTED
from eoslab.runs import AUDIT_ABORTED as ABORTED


@pytest.fixture(scope="module")
def spark():
    return A.spark_session(kafka=False)


def _frame(spark, rows):
    data = [(k.encode(), outcome.ljust(100, b"x")) for k, outcome in rows]
    return spark.createDataFrame(data, "key binary, value binary")


def test_aborted_records_a_reader_returned_are_counted_for_every_isolation_level(spark):
    clean = _frame(spark, [("1", COMMITTED), ("2", COMMITTED), ("2", COMMITTED)])
    leaky = _frame(spark, [("1", COMMITTED), ("7", ABORTED), ("8", ABORTED)])
    got = A.audit_frames({"read_committed": leaky, "read_uncommitted": clean})
    # A read_committed reader that returned aborted records is reported, not assumed away.
    assert got["read_committed"] == {"records": 3, "distinct_keys": 3, "duplicate": 0, "aborted_read": 2}
    assert got["read_uncommitted"] == {"records": 3, "distinct_keys": 2, "duplicate": 1, "aborted_read": 0}
