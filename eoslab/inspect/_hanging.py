"""Hanging transactions: found and ended with Kafka's own tool (KIP-664, ``kafka-transactions.sh``).

A transaction HANGS when a partition holds an open transaction that no coordinator
will ever end: the coordinator's current transaction of that producer does not include
the partition (or the coordinator does not know the producer at all), so no marker
will come, and the partition's last stable offset stays where that transaction began.

``find-hanging`` asks every leader (DescribeProducers) for producers with an open
transaction whose last write is older than ``--max-transaction-timeout`` — in MINUTES
(default 15, the broker's ``transaction.max.timeout.ms``) — then asks the coordinators
(ListTransactions, DescribeTransactions) which of them they still mean to end.
``abort`` writes the ABORT marker itself (WriteTxnMarkers to the partition's leader),
for the transaction starting at ``--start-offset``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from eoslab.inspect._cli_table import parse_tsv
from eoslab.inspect._table import Rows

if TYPE_CHECKING:
    from eoslab.cluster import Cluster


@dataclass(frozen=True)
class HangingTransaction:
    """One row of ``kafka-transactions.sh find-hanging``."""

    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    start_offset: int
    last_timestamp: int
    duration_min: int


def parse_find_hanging(text: str) -> list[HangingTransaction]:
    return [
        HangingTransaction(
            topic=r["Topic"],
            partition=int(r["Partition"]),
            producer_id=int(r["ProducerId"]),
            producer_epoch=int(r["ProducerEpoch"]),
            coordinator_epoch=int(r["CoordinatorEpoch"]),
            start_offset=int(r["StartOffset"]),
            last_timestamp=int(r["LastTimestamp"]),
            duration_min=int(r["Duration(min)"]),
        )
        for r in parse_tsv(text)
    ]


def find_hanging(
    cluster: Cluster, topic: str, partition: int | None = None, max_transaction_timeout_min: int = 15
) -> Rows[HangingTransaction]:
    """``find-hanging --topic T [--partition P] --max-transaction-timeout M`` (one JVM call).

    ``max_transaction_timeout_min`` is in minutes, as the tool takes it: only transactions
    whose producer last wrote longer ago than that are candidates (0: every open one).
    """
    args = ["--bootstrap-server", "{bootstrap}", "find-hanging", "--topic", topic]
    if partition is not None:
        args += ["--partition", str(partition)]
    args += ["--max-transaction-timeout", str(max_transaction_timeout_min)]
    return Rows(parse_find_hanging(cluster.tool("transactions", *args)), HangingTransaction)


def abort_transaction(cluster: Cluster, topic: str, partition: int, start_offset: int) -> str:
    """``abort --topic T --partition P --start-offset O``: the tool finds the producer whose open
    transaction starts at ``O`` (DescribeProducers) and has the leader write its ABORT marker."""
    args = ["--bootstrap-server", "{bootstrap}", "abort", "--topic", topic, "--partition", str(partition)]
    return cluster.tool("transactions", *args, "--start-offset", str(start_offset))
