"""The duplicate and aborted-record audit, with the Spark Kafka source: it scales past what a
notebook's consumer can hold, because Spark reads the topic in partitions, not into one list.

Records written by :func:`eoslab.bench.audit.write_audit_topic` carry their logical id as
the key. ``read_uncommitted`` sees every record that reached the log, aborted ones too;
``read_committed`` stops at the last stable offset and drops aborted transactions.
Anomalies are named as Jepsen names them: ``duplicate`` (a key read more than once),
``aborted_read`` (a record of an aborted transaction that a reader saw).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eoslab.errors import EoslabError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ISOLATIONS = ("read_committed", "read_uncommitted")


def read_topic(spark: SparkSession, bootstrap: str, topic: str, isolation: str) -> DataFrame:
    """A batch read of the whole topic, with the isolation level set explicitly (Spark's default,
    like Java's, is read_uncommitted)."""
    if isolation not in ISOLATIONS:
        raise EoslabError(f"isolation={isolation!r}: use read_committed or read_uncommitted.")
    return (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")
        .option("kafka.isolation.level", isolation)
        .load()
    )


def audit_topic(spark: SparkSession, bootstrap: str, topic: str) -> dict[str, dict[str, int]]:
    """Per isolation level: records read, distinct keys, ``duplicate`` (records − distinct keys);
    and ``aborted_read``: records read_uncommitted saw that read_committed did not."""
    from pyspark.sql import functions as F

    out: dict[str, dict[str, int]] = {}
    for iso in ISOLATIONS:
        df = read_topic(spark, bootstrap, topic, iso)
        row = df.agg(F.count("*").alias("records"), F.countDistinct("key").alias("distinct_keys")).first()
        assert row is not None
        out[iso] = {
            "records": int(row["records"]),
            "distinct_keys": int(row["distinct_keys"]),
            "duplicate": int(row["records"]) - int(row["distinct_keys"]),
        }
    out["read_uncommitted"]["aborted_read"] = out["read_uncommitted"]["records"] - out["read_committed"]["records"]
    out["read_committed"]["aborted_read"] = 0
    return out
