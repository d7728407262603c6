"""Transactions as the coordinators know them: now, and as a history in ``__transaction_state``.

- now: ``kafka-transactions.sh list`` / ``describe`` (ListTransactions and
  DescribeTransactions, KIP-664), which confluent-kafka does not offer;
- history: the coordinator writes every state change of a transactional id
  to partition ``abs(hash(id)) % 50`` of ``__transaction_state`` before it
  acts on it (KIP-98); DumpLogSegments' ``--transaction-log-decoder`` prints
  those records, which we keep in log order.

``transactionStatus`` codes (``TransactionState`` in kafka-transaction-coordinator 4.1.2):
0 Empty, 1 Ongoing, 2 PrepareCommit, 3 PrepareAbort, 4 CompleteCommit,
5 CompleteAbort, 6 Dead, 7 PrepareEpochFence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab.errors import EoslabError
from eoslab.inspect._batches import partition_files
from eoslab.inspect._cli_table import opt_int, parse_tsv
from eoslab.inspect._coordinators import coordinator_partition
from eoslab.inspect._dumplog import DumpedFile, dump
from eoslab.inspect._table import Rows
from eoslab.topology import TXN_STATE_PARTITIONS

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

TXN_STATES = (
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
)
"""``transactionStatus`` byte -> name, as ``kafka-transactions.sh`` spells the states."""


class TransactionNotFound(EoslabError):
    """The coordinator does not know that transactional id."""


@dataclass(frozen=True)
class TransactionListing:
    """One row of ``kafka-transactions.sh list``."""

    transactional_id: str
    coordinator: int
    producer_id: int
    state: str


@dataclass(frozen=True)
class TransactionDescription:
    """``kafka-transactions.sh describe``: the coordinator's current view of one transactional id.

    ``start_time_ms`` is -1 when no transaction ran yet; ``partitions`` are those
    of the open (or completing) transaction, empty once it completed.
    """

    transactional_id: str
    coordinator: int
    producer_id: int
    producer_epoch: int
    state: str
    timeout_ms: int
    start_time_ms: int | None
    duration_ms: int | None
    partitions: tuple[str, ...]


@dataclass(frozen=True)
class TxnLogEntry:
    """One state change of a transactional id, as its coordinator logged it.

    ``state`` is ``"<deleted>"`` for the tombstone that removes an expired id
    (``transactional.id.expiration.ms``). ``client_transaction_version`` is
    written from transaction version 2 on (KIP-890); None when absent.
    """

    transactional_id: str
    offset: int
    state: str
    producer_id: int | None
    producer_epoch: int | None
    partitions: tuple[str, ...]
    timeout_ms: int | None
    last_update_ms: int | None
    start_ms: int | None
    append_time_ms: int
    client_transaction_version: int | None = None
    previous_producer_id: int | None = None
    next_producer_id: int | None = None


def parse_list(text: str) -> list[TransactionListing]:
    return [
        TransactionListing(r["TransactionalId"], int(r["Coordinator"]), int(r["ProducerId"]), r["TransactionState"])
        for r in parse_tsv(text)
    ]


def parse_describe(text: str) -> TransactionDescription:
    rows = parse_tsv(text)
    if not rows:
        raise ValueError("describe printed no row")
    r = rows[0]
    return TransactionDescription(
        transactional_id=r["TransactionalId"],
        coordinator=int(r["CoordinatorId"]),
        producer_id=int(r["ProducerId"]),
        producer_epoch=int(r["ProducerEpoch"]),
        state=r["TransactionState"],
        timeout_ms=int(r["TransactionTimeoutMs"]),
        start_time_ms=opt_int(r.get("CurrentTransactionStartTimeMs", "")),
        duration_ms=opt_int(r.get("TransactionDurationMs", "")),
        partitions=tuple(p for p in r.get("TopicPartitions", "").split(",") if p),
    )


def list_transactions(cluster: Cluster) -> Rows[TransactionListing]:
    """Every transactional id the coordinators hold (one JVM call)."""
    out = cluster.tool("transactions", "--bootstrap-server", "{bootstrap}", "list")
    return Rows(sorted(parse_list(out), key=lambda t: t.transactional_id), TransactionListing)


def describe_transaction(cluster: Cluster, transactional_id: str) -> TransactionDescription:
    """The coordinator's view of one transactional id (one JVM call)."""
    try:
        out = cluster.tool(
            "transactions", "--bootstrap-server", "{bootstrap}", "describe", "--transactional-id", transactional_id
        )
    except EoslabError as exc:
        if "could not be found" in str(exc) or "TransactionalIdNotFound" in str(exc):
            raise TransactionNotFound(
                f"No coordinator knows transactional id {transactional_id!r}: it never ran init_transactions(), "
                f"or it expired (transactional.id.expiration.ms, 7 days by default)."
            ) from None
        raise
    return parse_describe(out)


def _partitions(value: dict[str, Any]) -> tuple[str, ...]:
    parts = value.get("transactionPartitions") or []
    return tuple(f"{p['topic']}-{i}" for p in parts for i in p["partitionIds"])


def parse_transaction_log(files: list[DumpedFile], transactional_id: str | None = None) -> list[TxnLogEntry]:
    """The ``__transaction_state`` records (of one id, or all) in log order."""
    out = []
    for f in files:
        for b in f.batches:
            for r in b.records:
                key = r.key_json()
                if not isinstance(key, dict) or "transactionalId" not in key.get("data", {}):
                    continue
                tid = key["data"]["transactionalId"]
                if transactional_id is not None and tid != transactional_id:
                    continue
                v = r.value_json()
                if v is None:
                    out.append(TxnLogEntry(tid, r.offset, "<deleted>", None, None, (), None, None, None, b.timestamp))
                    continue
                d = v["data"]
                status = d["transactionStatus"]
                out.append(
                    TxnLogEntry(
                        transactional_id=tid,
                        offset=r.offset,
                        state=TXN_STATES[status] if 0 <= status < len(TXN_STATES) else f"unknown({status})",
                        producer_id=d["producerId"],
                        producer_epoch=d["producerEpoch"],
                        partitions=_partitions(d),
                        timeout_ms=d.get("transactionTimeoutMs"),
                        last_update_ms=d.get("transactionLastUpdateTimestampMs"),
                        start_ms=d.get("transactionStartTimestampMs"),
                        append_time_ms=b.timestamp,
                        client_transaction_version=d.get("clientTransactionVersion"),
                        previous_producer_id=d.get("previousProducerId"),
                        next_producer_id=d.get("nextProducerId"),
                    )
                )
    out.sort(key=lambda e: e.offset)
    return out


def transaction_history(cluster: Cluster, transactional_id: str, broker: int | None = None) -> Rows[TxnLogEntry]:
    """Every state the coordinator logged for ``transactional_id``, oldest first.

    Reads all segments of ``__transaction_state-<abs(hash(id)) % 50>`` on
    ``broker`` (default: that partition's leader, i.e. the coordinator) in one
    DumpLogSegments call. The topic is compacted: on a long-lived cluster the
    oldest states of an id may already be cleaned away.
    """
    part = coordinator_partition(transactional_id, TXN_STATE_PARTITIONS)
    node, folder, names = partition_files(cluster, "__transaction_state", part, broker)
    files = dump(cluster, node, folder, names, "--transaction-log-decoder")
    return Rows(parse_transaction_log(files, transactional_id), TxnLogEntry)
