"""One summarizer per API the trace opens: small functions from a decoded body to the fields a lesson reads.

A request summarizer takes the decoded request (AddPartitionsToTxn's shape
depends on its version) and the topic names learnt so far; a response
summarizer takes the response body, the request's summary (FindCoordinator
v0-3 answers without naming its key) and the names, and gives its fields and
the error codes it found: :func:`eoslab.faults._summary.summarize_response`
adds the first non-zero one, so every response summary carries ``error_code``
and ``error`` the same way. The table that maps api keys to these is
:data:`eoslab.faults._summary.SUMMARIZERS`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple, overload

from eoslab.protocol import RecordBatchHeader, Request, parse_record_batches

PRODUCE, FETCH, METADATA, FIND_COORDINATOR, API_VERSIONS = 0, 1, 3, 10, 18
INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = 22, 24, 25, 26, 28

TopicNames = dict[uuid.UUID, str]
Body = dict[str, Any]
Fields = tuple[dict[str, Any], list[int]]  # a response's summary fields, and the error codes found in it
RequestSummarizer = Callable[[Request, TopicNames], dict[str, Any]]
ResponseSummarizer = Callable[[Body, dict[str, Any], TopicNames], Fields]


class Summarizer(NamedTuple):
    """One API's entry: ``request`` is None when only its responses are read (Metadata, ApiVersions)."""

    request: RequestSummarizer | None
    response: ResponseSummarizer


@cache
def _error_names() -> dict[int, str]:
    # confluent-kafka mirrors Kafka's Errors enum (codes >= -1); negative others are librdkafka's own.
    from confluent_kafka import KafkaError

    names = {v: k for k, v in vars(KafkaError).items() if isinstance(v, int) and v >= -1 and k.isupper()}
    names[0] = "NONE"
    return names


@overload
def error_name(code: int) -> str: ...
@overload
def error_name(code: None) -> None: ...
def error_name(code: int | None) -> str | None:
    """Kafka's name for an error code (``45`` -> ``OUT_OF_ORDER_SEQUENCE_NUMBER``)."""
    if code is None:
        return None
    return _error_names().get(code, f"ERROR_{code}")


def _topic(entry: Body, names: TopicNames) -> str | None:
    name = entry.get("Name")
    if name:
        return str(name)
    tid = entry.get("TopicId")
    if tid is None:
        return None
    return names.get(tid, f"id:{tid}")  # an id no relayed Metadata response has named yet


def _fetch_topic(entry: Body, names: TopicNames) -> str | None:
    """Fetch calls the name ``Topic`` (v0-12); v13+ sends only the ``TopicId``."""
    if entry.get("Topic"):
        return str(entry["Topic"])
    return _topic({"TopicId": entry.get("TopicId")}, names)


def _txn_ids(b: Body) -> dict[str, Any]:
    """The producer a transactional request speaks for (None where its version has no such field)."""
    return {
        "transactional_id": b.get("TransactionalId"),
        "producer_id": b.get("ProducerId"),
        "producer_epoch": b.get("ProducerEpoch"),
    }


# ---------------------------------------------------------------- Produce


def _produce_batch(topic: str | None, partition: int, h: RecordBatchHeader) -> dict[str, Any]:
    last = -1 if h.base_sequence < 0 else h.base_sequence + h.last_offset_delta
    return {
        "topic": topic,
        "partition": partition,
        "producer_id": h.producer_id,
        "producer_epoch": h.producer_epoch,
        "base_sequence": h.base_sequence,
        "last_sequence": last,
        "record_count": h.record_count,
        "transactional": h.is_transactional,
    }


def produce_request(req: Request, names: TopicNames) -> dict[str, Any]:
    """One item per record batch: the producer id, epoch and sequences the broker deduplicates on."""
    b = req.body
    items = [
        _produce_batch(_topic(t, names), p["Index"], h)
        for t in b.get("TopicData") or []
        for p in t.get("PartitionData") or []
        for h in parse_record_batches(p.get("Records") or b"")
    ]
    return {"transactional_id": b.get("TransactionalId"), "acks": b.get("Acks"), "items": items}


def produce_response(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    """Each partition's error, or the offset the leader wrote the batch at (a deduplicated retry's original)."""
    items = [
        {
            "topic": _topic(t, names),
            "partition": p["Index"],
            "error_code": p["ErrorCode"],
            "error": error_name(p["ErrorCode"]),
            "base_offset": p["BaseOffset"],
        }
        for t in b.get("Responses") or []
        for p in t.get("PartitionResponses") or []
    ]
    return {"items": items}, [i["error_code"] for i in items]


# ---------------------------------------------------------------- Fetch (module 04: what read_committed rests on)


def fetch_request(req: Request, names: TopicNames) -> dict[str, Any]:
    b = req.body
    return {
        "isolation_level": {0: "read_uncommitted", 1: "read_committed"}.get(b.get("IsolationLevel", 0)),
        "partitions": [
            {"topic": _fetch_topic(t, names), "partition": p["Partition"], "fetch_offset": p["FetchOffset"]}
            for t in b.get("Topics") or []
            for p in t.get("Partitions") or []
        ],
    }


def _batch(h: RecordBatchHeader) -> dict[str, Any]:
    return {
        "base_offset": h.base_offset,
        "last_offset": h.last_offset,
        "producer_id": h.producer_id,
        "transactional": h.is_transactional,
        "control": h.is_control,
        "marker": {0: "ABORT", 1: "COMMIT"}.get(int(h.control_type)) if h.control_type is not None else None,
    }


def _fetch_partition(topic: str | None, p: Body) -> dict[str, Any]:
    aborted = p.get("AbortedTransactions")
    batches = parse_record_batches(p.get("Records") or b"", allow_partial=True)
    return {
        "topic": topic,
        "partition": p["PartitionIndex"],
        "error_code": p["ErrorCode"],
        "high_watermark": p["HighWatermark"],
        "last_stable_offset": p["LastStableOffset"],
        # None: the leader sent no list (a read_uncommitted fetch); []: none in the returned range
        "aborted_transactions": None
        if aborted is None
        else [{"producer_id": a["ProducerId"], "first_offset": a["FirstOffset"]} for a in aborted],
        "batches": [_batch(h) for h in batches],
    }


def fetch_response(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    """Each partition's HW, LSO, aborted transactions and batches: aborted ones too, the CLIENT drops them."""
    partitions = [
        _fetch_partition(_fetch_topic(t, names), p) for t in b.get("Responses") or [] for p in t.get("Partitions") or []
    ]
    return {"partitions": partitions}, [p["error_code"] for p in partitions]


# ---------------------------------------------------------------- the transaction APIs


def init_producer_id_request(req: Request, names: TopicNames) -> dict[str, Any]:
    """A producer without an id sends -1/-1; a transactional one re-initialising sends its own (KIP-360)."""
    b = req.body
    return {
        "transactional_id": b.get("TransactionalId"),
        "producer_id": b.get("ProducerId", -1),
        "producer_epoch": b.get("ProducerEpoch", -1),
    }


def producer_id_response(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    """InitProducerId's grant, and EndTxn's bumped epoch under transaction.version 2 (KIP-890)."""
    if "ProducerId" not in b:
        return {}, []
    return {"producer_id": b["ProducerId"], "producer_epoch": b["ProducerEpoch"]}, []


def _add_partitions_txns(req: Request) -> list[Body]:
    """v0-3 name one transaction at top level; v4+ (the broker's own verification, KIP-890) a list of them."""
    b = req.body
    if req.api_version > 3:
        return list(b.get("Transactions") or [])
    return [
        {
            "TransactionalId": b["V3AndBelowTransactionalId"],
            "ProducerId": b["V3AndBelowProducerId"],
            "ProducerEpoch": b["V3AndBelowProducerEpoch"],
            "Topics": b["V3AndBelowTopics"],
        }
    ]


def add_partitions_request(req: Request, names: TopicNames) -> dict[str, Any]:
    txns = _add_partitions_txns(req)
    items = [
        {
            "transactional_id": t["TransactionalId"],
            "producer_id": t["ProducerId"],
            "producer_epoch": t["ProducerEpoch"],
            "topic": tp["Name"],
            "partition": p,
        }
        for t in txns
        for tp in t["Topics"]
        for p in tp["Partitions"]
    ]
    return {**_txn_ids(txns[0] if txns else {}), "items": items}


def add_partitions_response(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    results = b.get("ResultsByTopicV3AndBelow") or [
        tr for r in b.get("ResultsByTransaction") or [] for tr in r["TopicResults"]
    ]
    items = [
        {
            "topic": t["Name"],
            "partition": p["PartitionIndex"],
            "error_code": p["PartitionErrorCode"],
            "error": error_name(p["PartitionErrorCode"]),
        }
        for t in results
        for p in t["ResultsByPartition"]
    ]
    return {"items": items}, [i["error_code"] for i in items]


def group_txn_request(req: Request, names: TopicNames) -> dict[str, Any]:
    """AddOffsetsToTxn: the consumer group whose offsets join the transaction."""
    return {**_txn_ids(req.body), "group_id": req.body.get("GroupId")}


def end_txn_request(req: Request, names: TopicNames) -> dict[str, Any]:
    return {**_txn_ids(req.body), "committed": req.body.get("Committed")}


def txn_offset_commit_request(req: Request, names: TopicNames) -> dict[str, Any]:
    """v0-5 name the topics, v6+ (KIP-1319, the Java 4.4 client) send their ids: both read as names."""
    b = req.body
    items = [
        {"topic": _topic(t, names), "partition": p["PartitionIndex"], "offset": p["CommittedOffset"]}
        for t in b.get("Topics") or []
        for p in t["Partitions"]
    ]
    # The group metadata KIP-447 checks (v3+): the member, and the classic generation or the KIP-848 member
    # epoch ("GenerationId" in the schemas up to 4.3, "GenerationIdOrMemberEpoch" from 4.4).
    generation = b.get("GenerationIdOrMemberEpoch", b.get("GenerationId"))
    member = {"member_id": b.get("MemberId"), "generation": generation}
    return {**group_txn_request(req, names), **member, "items": items}


def txn_offset_commit_response(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    items = [
        {
            "topic": _topic(t, names),
            "partition": p["PartitionIndex"],
            "error_code": p["ErrorCode"],
            "error": error_name(p["ErrorCode"]),
        }
        for t in b.get("Topics") or []
        for p in t["Partitions"]
    ]
    return {"items": items}, [i["error_code"] for i in items]


def no_fields(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    """A response whose only news is its top-level error code (AddOffsetsToTxn)."""
    return {}, []


# ---------------------------------------------------------------- coordinators, topic ids, features


def find_coordinator_request(req: Request, names: TopicNames) -> dict[str, Any]:
    """v0-3 ask for one ``Key``, v4+ for a list (KIP-699)."""
    b = req.body
    keys = b.get("CoordinatorKeys") or ([b["Key"]] if b.get("Key") is not None else [])
    return {"key_type": {0: "group", 1: "transaction"}.get(b.get("KeyType", 0), b.get("KeyType")), "keys": keys}


def find_coordinator_response(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    if "Coordinators" in b:
        coordinators = b["Coordinators"]
        items = [
            {"key": c["Key"], "node_id": c["NodeId"], "error_code": c["ErrorCode"], "error": error_name(c["ErrorCode"])}
            for c in coordinators
        ]
        return {"items": items}, [c["ErrorCode"] for c in coordinators]
    keys = request.get("keys") or [None]  # v0-3 answer for the one key asked, without naming it
    code = b.get("ErrorCode", 0)
    return {"items": [{"key": keys[0], "node_id": b.get("NodeId"), "error_code": code, "error": error_name(code)}]}, []


def metadata_response(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    return {"topics": len(b.get("Topics") or [])}, []


def api_versions_response(b: Body, request: dict[str, Any], names: TopicNames) -> Fields:
    """Tagged fields (v3+): absent from a v0-v2 answer, and a level-0 feature is not listed."""
    return {"finalized_features": {f["Name"]: f["MaxVersionLevel"] for f in b.get("FinalizedFeatures") or []}}, []
