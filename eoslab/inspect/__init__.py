"""What the cluster knows about exactly-once, as Python objects and DataFrames.

Every function takes the :class:`~eoslab.cluster.Cluster` first and returns
dataclasses (lists of them come as :class:`Rows`, with ``.to_frame()``)::

    from eoslab import inspect as ins
    ins.status_frame(cluster)                            # the nodes, their states, the quorum leader
    ins.partition_folder(cluster, "demo", 0, broker=2)   # the files of a replica on disk
    ins.batches(cluster, "demo", 0).to_frame()          # batch headers on the leader's disk
    ins.describe_producers(cluster, "demo", 0, broker=2)
    ins.offsets(cluster, "demo").to_frame()              # log start, HW, LSO
    ins.group_offsets(cluster, "g", "demo").to_frame()   # committed, pending, offsets behind, records left
    ins.coordinator(cluster, "my-txn-app")               # predicted and reported
    ins.transaction_history(cluster, "my-txn-app")       # __transaction_state, in order
    ins.markers_of(cluster, [("demo", 0), ("demo", 1)])  # COMMIT/ABORT control batches
    ins.txn_index(cluster, "demo", 0)                    # .txnindex: the aborted transactions
    ins.find_hanging(cluster, "demo", 0, 0)              # open transactions no coordinator will end
    ins.abort_transaction(cluster, "demo", 0, 42)        # end the one starting at offset 42 (KIP-664)
    ins.finalized_features(cluster)                      # transaction.version=2 (KIP-890)?
    ins.producer_id_blocks(cluster).to_frame()           # ProducerIdsRecords (KIP-730)
    p = ins.ObservedProducer({...}); p.eos()             # librdkafka's own PID/epoch

Where Kafka ships a tool that answers, we run it and parse its text
(DumpLogSegments, kafka-transactions.sh): one JVM start per question, all
files in one call, sealed segments cached. Where a Python API answers
(ListOffsets, FindCoordinator, librdkafka statistics) no JVM starts.
"""

from eoslab.errors import PartitionFolderMissing
from eoslab.inspect._batches import batches, batches_of, partition_files, records_frame
from eoslab.inspect._client_view import ClientEos, ClientLog, ObservedProducer, acquired_pids, observed_producer
from eoslab.inspect._cluster_views import cluster_mermaid, partition_folder, status_frame
from eoslab.inspect._coordinators import (
    Coordinator,
    coordinator,
    coordinator_partition,
    coordinators,
    java_string_hash,
    kafka_abs,
    predict_coordinators,
)
from eoslab.inspect._dumplog import AbortedTxn, Batch, DumpedFile, Record, SnapshotEntry, parse_dump
from eoslab.inspect._dumptool import clear_cache
from eoslab.inspect._features import (
    Feature,
    describe_features,
    features_from_api_versions,
    finalized_features,
    parse_feature_describe,
    transaction_version,
)
from eoslab.inspect._group_offsets import GroupPartition, group_offsets, group_rows
from eoslab.inspect._hanging import HangingTransaction, abort_transaction, find_hanging, parse_find_hanging
from eoslab.inspect._isr_timeline import IsrTimeline, isr_timeline
from eoslab.inspect._markers import Marker, markers, markers_from, markers_of, txn_index
from eoslab.inspect._offsets import PartitionOffsets, offsets, partition_offsets
from eoslab.inspect._pid_blocks import (
    PRODUCER_ID_BLOCK_SIZE,
    ProducerIdBlock,
    block_of,
    parse_pid_blocks,
    producer_id_blocks,
)
from eoslab.inspect._producers import ProducerState, describe_producers, parse_describe_producers, producer_snapshots
from eoslab.inspect._table import Rows, frame
from eoslab.inspect._transactions import (
    TXN_STATES,
    TransactionDescription,
    TransactionListing,
    TransactionNotFound,
    TxnLogEntry,
    describe_transaction,
    list_transactions,
    parse_transaction_log,
    transaction_histories,
    transaction_history,
    txn_state_name,
)

__all__ = [
    "AbortedTxn",
    "Batch",
    "ClientEos",
    "ClientLog",
    "Coordinator",
    "DumpedFile",
    "Feature",
    "GroupPartition",
    "HangingTransaction",
    "IsrTimeline",
    "Marker",
    "ObservedProducer",
    "PRODUCER_ID_BLOCK_SIZE",
    "PartitionFolderMissing",
    "PartitionOffsets",
    "ProducerIdBlock",
    "ProducerState",
    "Record",
    "Rows",
    "SnapshotEntry",
    "TXN_STATES",
    "TransactionDescription",
    "TransactionListing",
    "TransactionNotFound",
    "TxnLogEntry",
    "abort_transaction",
    "acquired_pids",
    "batches",
    "batches_of",
    "block_of",
    "clear_cache",
    "cluster_mermaid",
    "coordinator",
    "coordinator_partition",
    "coordinators",
    "describe_features",
    "describe_producers",
    "describe_transaction",
    "features_from_api_versions",
    "finalized_features",
    "find_hanging",
    "frame",
    "group_offsets",
    "group_rows",
    "isr_timeline",
    "java_string_hash",
    "kafka_abs",
    "list_transactions",
    "markers",
    "markers_from",
    "markers_of",
    "observed_producer",
    "offsets",
    "parse_describe_producers",
    "parse_dump",
    "parse_feature_describe",
    "parse_find_hanging",
    "parse_pid_blocks",
    "parse_transaction_log",
    "partition_files",
    "partition_folder",
    "partition_offsets",
    "predict_coordinators",
    "producer_id_blocks",
    "producer_snapshots",
    "records_frame",
    "status_frame",
    "transaction_histories",
    "transaction_history",
    "transaction_version",
    "txn_index",
    "txn_state_name",
]
