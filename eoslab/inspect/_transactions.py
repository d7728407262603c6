"""Transactions as the coordinators know them: now, and as a history in ``__transaction_state``.

- now: ``kafka-transactions.sh list`` / ``describe`` (ListTransactions and
  DescribeTransactions, KIP-664), which confluent-kafka does not offer;
- history: the coordinator writes every state change of a transactional id
  to partition ``abs(hash(id)) % 50`` of ``__transaction_state`` before it
  acts on it (KIP-98); DumpLogSegments' ``--transaction-log-decoder`` prints
  those records, which we keep in log order.

``transactionStatus`` is the state's byte up to Kafka 4.3 and its name from 4.4 on (KAFKA-20712:
the decoder resolves the byte with ``TransactionState.fromId``); both are read. The bytes
(``TransactionState`` in kafka-transaction-coordinator): 0 Empty, 1 Ongoing, 2 PrepareCommit,
3 PrepareAbort, 4 CompleteCommit, 5 CompleteAbort, 6 Dead, 7 PrepareEpochFence.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab.errors import ClusterError, KafkaToolError
from eoslab.inspect._batches import partition_files
from eoslab.inspect._cli_table import opt_int, parse_tsv
from eoslab.inspect._coordinators import coordinator_partition
from eoslab.inspect._dumplog import DumpedFile
from eoslab.inspect._dumptool import dump, dump_per_node, log_files_by_leader
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


def txn_state_name(status: int | str) -> str:
    """The state of a ``transactionStatus`` value: a byte (Kafka <= 4.3) or a name (4.4+, KAFKA-20712).

    A value this kit does not know comes back as ``"unknown(<value>)"`` rather than an error: a newer
    Kafka may add a state, and the history around it is still worth reading.
    """
    if isinstance(status, str):
        return status if status in TXN_STATES else f"unknown({status})"
    return TXN_STATES[status] if 0 <= status < len(TXN_STATES) else f"unknown({status})"


class TransactionNotFound(ClusterError):
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
    (``transactional.id.expiration.ms``). The KIP-890 fields are tagged fields,
    written only when set (None when absent): ``client_transaction_version``
    is 2 for a client that speaks transaction version 2 (the Java 4.x client)
    AND for the aborts the coordinator starts itself (a fence, a timeout),
    whatever the client. The producer-id rotation fields: Kafka 4.1 writes none
    of them; from 4.3 on (KAFKA-20310) the coordinator writes ``previous_producer_id`` on every
    record (equal to ``producer_id``, and the old id on the first record under a
    new one), and ``next_producer_id`` on the PrepareCommit/PrepareAbort whose
    epoch bump overflows the int16 (the id the transaction completes under);
    ``next_producer_epoch`` stayed absent on 4.4.0. ``append_time_ms`` is the coordinator's clock when it wrote
    the record; ``last_update_ms`` the time it decided the change.
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
    next_producer_epoch: int | None = None


def parse_list(text: str) -> list[TransactionListing]:
    return [
        TransactionListing(r["TransactionalId"], int(r["Coordinator"]), int(r["ProducerId"]), r["TransactionState"])
        for r in parse_tsv(text)
    ]


def parse_describe(text: str) -> TransactionDescription:
    rows = parse_tsv(text)
    if not rows:
        raise KafkaToolError(
            "`kafka-transactions describe` printed no row: list the known ids with ins.list_transactions(cluster)."
        )
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
    except KafkaToolError as exc:
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
    """The ``__transaction_state`` records (of one id, or all) in log order.

    Entries are ordered by partition folder, then offset (offsets of two
    partitions do not compare).
    """
    found: list[tuple[str, int, TxnLogEntry]] = []
    for f in files:
        folder = os.path.dirname(f.path)
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
                    gone = TxnLogEntry(tid, r.offset, "<deleted>", None, None, (), None, None, None, b.timestamp)
                    found.append((folder, r.offset, gone))
                    continue
                d = v["data"]
                entry = TxnLogEntry(
                    transactional_id=tid,
                    offset=r.offset,
                    state=txn_state_name(d["transactionStatus"]),
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
                    next_producer_epoch=d.get("nextProducerEpoch"),
                )
                found.append((folder, r.offset, entry))
    found.sort(key=lambda t: (t[0], t[1]))
    return [e for _, _, e in found]


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


def transaction_histories(
    cluster: Cluster, transactional_ids: list[str], since: dict[str, int] | None = None
) -> dict[str, Rows[TxnLogEntry]]:
    """:func:`transaction_history` of several ids: ONE DumpLogSegments call per coordinator broker.

    ``since`` maps an id to the first ``__transaction_state`` offset to keep
    (e.g. the offset before a lesson step), so a step shows only its own records.
    """
    wanted = sorted(
        {("__transaction_state", coordinator_partition(t, TXN_STATE_PARTITIONS)) for t in transactional_ids}
    )
    leaders = {(p.topic, p.partition): p.leader for p in cluster.partitions("__transaction_state")}
    files_of = log_files_by_leader(cluster, wanted, leaders)
    dumped: list[DumpedFile] = [
        f for files in dump_per_node(cluster, files_of, "--transaction-log-decoder").values() for f in files
    ]
    out: dict[str, Rows[TxnLogEntry]] = {}
    for tid in transactional_ids:
        first = (since or {}).get(tid, 0)
        out[tid] = Rows([e for e in parse_transaction_log(dumped, tid) if e.offset >= first], TxnLogEntry)
    return out
