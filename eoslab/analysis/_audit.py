"""The duplicate and aborted-record audit, with the Spark Kafka source: it scales past what a
notebook's consumer can hold, because Spark reads the topic in partitions, not into one list.

Records written by :func:`eoslab.bench.audit.write_audit_topic` carry their logical id as
the key, and the writer's history in the value: it starts with ``abort:`` when the writer
aborted the record's transaction. ``read_uncommitted`` sees every record that reached the log,
aborted ones too; ``read_committed`` stops at the last stable offset and drops aborted
transactions. Anomalies are named as Jepsen names them: ``duplicate`` (a key read more than
once), ``aborted_read`` (a record of an aborted transaction that a reader saw), counted for
each isolation level from what that reader returned.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from eoslab.errors import DataError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

ISOLATIONS = ("read_committed", "read_uncommitted")


def kafka_source(spark: SparkSession, bootstrap: str, topics: str, isolation: str | None) -> DataFrame:
    """Every Spark read of Kafka in the kit: a batch read of ``topics`` (comma-separated) from the start to
    ``latest``, ``failOnDataLoss`` left true (Spark's default), ``isolation`` set explicitly (Spark's default,
    like Java's, is read_uncommitted; ``None`` leaves it unset, to show that default).

    Where it ends, and why: ``latest`` is resolved with the reader's isolation level, so under read_committed
    the read ends at each partition's last stable offset (LSO) and an open transaction's records are left for
    the next read. An end computed from the high watermarks would reach past an open transaction: Spark then
    waits for offsets a read_committed consumer is not given until the transaction ends, and fails ("Some data
    may have been lost", failOnDataLoss=true) or skips them for good (failOnDataLoss=false) — notebook 07,
    mistake 8, on this cluster (Spark 4, Kafka 4.1.2). Below the LSO, the offsets of markers and aborted
    records are holes Spark skips without a data-loss error (notebook 06's audit reads aborted transactions).
    Spark's docs: the Structured Streaming + Kafka Integration Guide, ``endingOffsets``, ``failOnDataLoss``."""
    if isolation is not None and isolation not in ISOLATIONS:
        raise DataError(f"isolation={isolation!r}: use read_committed, read_uncommitted, or None for Spark's default.")
    reader = (
        spark.read.format("kafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topics)
        .option("startingOffsets", "earliest")
        .option("endingOffsets", "latest")  # the LSO under read_committed: never past an open transaction
        .option("failOnDataLoss", "true")  # a hole above the end would be an error, never skipped silently
    )
    if isolation is not None:
        reader = reader.option("kafka.isolation.level", isolation)
    return reader.load()


def read_topic(spark: SparkSession, bootstrap: str, topic: str, isolation: str | None) -> DataFrame:
    """A batch read of the whole topic up to ``latest`` (the LSO under read_committed: :func:`kafka_source`
    says why), with the isolation level set explicitly; ``None`` leaves it unset, to show Spark's default."""
    return kafka_source(spark, bootstrap, topic, isolation)


def topic_values(spark: SparkSession, bootstrap: str, topic: str, isolation: str | None) -> list[tuple[int, int, str]]:
    """(partition, offset, value) of every record Spark's Kafka source returns at ``isolation``, in order."""
    rows = read_topic(spark, bootstrap, topic, isolation).select("partition", "offset", "value").collect()
    return sorted((int(r["partition"]), int(r["offset"]), bytes(r["value"] or b"").decode()) for r in rows)


def audit_frames(frames: dict[str, DataFrame]) -> dict[str, dict[str, int]]:
    """Per isolation level, from the records that reader returned: records read, distinct keys,
    ``duplicate`` (records − distinct keys) and ``aborted_read`` (records whose value says the
    writer aborted their transaction)."""
    from pyspark.sql import functions as F

    from eoslab.runs import AUDIT_ABORTED as ABORTED

    tagged = [df.select("key", "value", F.lit(iso).alias("isolation")) for iso, df in frames.items()]
    both = functools.reduce(lambda a, b: a.unionByName(b), tagged)
    aborted = F.col("value").cast("string").startswith(ABORTED.decode())
    rows = both.groupBy("isolation").agg(  # one Spark job for every isolation level
        F.count("*").alias("records"),
        F.countDistinct("key").alias("distinct_keys"),
        F.count(F.when(aborted, 1)).alias("aborted_read"),
    )
    out = {
        r["isolation"]: {
            "records": int(r["records"]),
            "distinct_keys": int(r["distinct_keys"]),
            "duplicate": int(r["records"]) - int(r["distinct_keys"]),
            "aborted_read": int(r["aborted_read"]),
        }
        for r in rows.collect()
    }
    # An isolation level whose reader returned nothing has no group: it read 0 of everything.
    return {
        iso: out.get(iso, dict.fromkeys(("records", "distinct_keys", "duplicate", "aborted_read"), 0)) for iso in frames
    }


def audit_topic(spark: SparkSession, bootstrap: str, topic: str) -> dict[str, dict[str, int]]:
    """:func:`audit_frames` of the topic read at each isolation level."""
    return audit_frames({iso: read_topic(spark, bootstrap, topic, iso) for iso in ISOLATIONS})
