"""What a frame means for exactly-once: the few fields a lesson reads, from decoded frames.

Only the EOS APIs are summarised (InitProducerId, Produce, AddPartitionsToTxn,
AddOffsetsToTxn, TxnOffsetCommit, EndTxn, FindCoordinator, and Fetch for what
``read_committed`` rests on: the isolation level asked, each partition's high
watermark and last stable offset, the aborted transactions the leader lists and
the batches it sends — aborted ones included: the CLIENT drops them, KIP-98).
A Fetch summary names its partitions under ``partitions``, never ``items``, so a
fault rule written for Produce (topic, partition) never hits a consumer. Metadata responses
are read only to learn topic ids, because Java 4.x clients send Produce v13
with a TopicId and no name; ApiVersions responses only for the feature levels
the broker finalized (``transaction.version``), which travel in tagged fields
(KIP-584) and decide which transaction protocol a Java 4.x client speaks. The
proxy forwards every frame byte for byte: reading a field never rewrites it.
Every summary is a plain JSON-able dict, so the daemon can ship it over its
control API unchanged.
"""

from __future__ import annotations

import uuid
from functools import cache
from typing import Any, overload

from eoslab.protocol import Request, Response, parse_record_batches

PRODUCE, FETCH, METADATA, FIND_COORDINATOR, API_VERSIONS = 0, 1, 3, 10, 18
INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT = 22, 24, 25, 26, 28
EOS_API_KEYS = frozenset(
    {PRODUCE, FETCH, FIND_COORDINATOR, INIT_PRODUCER_ID, ADD_PARTITIONS, ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT}
)
# The diagrams' default: Fetch is decoded (module 04) but a consumer's polls would crowd every diagram.
EOS_API_NAMES = frozenset(
    {
        "Produce",
        "FindCoordinator",
        "InitProducerId",
        "AddPartitionsToTxn",
        "AddOffsetsToTxn",
        "EndTxn",
        "TxnOffsetCommit",
    }
)
DECODED_RESPONSES = EOS_API_KEYS | {METADATA, API_VERSIONS}

TopicNames = dict[uuid.UUID, str]


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


def _topic(entry: dict[str, Any], names: TopicNames) -> str | None:
    name = entry.get("Name")
    if name:
        return str(name)
    tid = entry.get("TopicId")
    if tid is None:
        return None
    return names.get(tid, f"id:{tid}")  # an id no relayed Metadata response has named yet


def _fetch_topic(entry: dict[str, Any], names: TopicNames) -> str | None:
    """Fetch calls the name ``Topic`` (v0-12); v13+ sends only the ``TopicId``."""
    if entry.get("Topic"):
        return str(entry["Topic"])
    return _topic({"TopicId": entry.get("TopicId")}, names)


def _fetch_partition(topic: str | None, p: dict[str, Any]) -> dict[str, Any]:
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
        "batches": [
            {
                "base_offset": h.base_offset,
                "last_offset": h.last_offset,
                "producer_id": h.producer_id,
                "transactional": h.is_transactional,
                "control": h.is_control,
                "marker": {0: "ABORT", 1: "COMMIT"}.get(int(h.control_type)) if h.control_type is not None else None,
            }
            for h in batches
        ],
    }


def summarize_request(req: Request, names: TopicNames) -> dict[str, Any]:
    """The EOS fields of a request; ``{}`` for APIs the trace does not open."""
    b, k = req.body, req.api_key
    if k == PRODUCE:
        items = []
        for t in b.get("TopicData") or []:
            topic = _topic(t, names)
            for p in t.get("PartitionData") or []:
                for h in parse_record_batches(p.get("Records") or b""):
                    last = -1 if h.base_sequence < 0 else h.base_sequence + h.last_offset_delta
                    items.append(
                        {
                            "topic": topic,
                            "partition": p["Index"],
                            "producer_id": h.producer_id,
                            "producer_epoch": h.producer_epoch,
                            "base_sequence": h.base_sequence,
                            "last_sequence": last,
                            "record_count": h.record_count,
                            "transactional": h.is_transactional,
                        }
                    )
        return {"transactional_id": b.get("TransactionalId"), "acks": b.get("Acks"), "items": items}
    if k == FETCH:
        return {
            "isolation_level": {0: "read_uncommitted", 1: "read_committed"}.get(b.get("IsolationLevel", 0)),
            "partitions": [
                {"topic": _fetch_topic(t, names), "partition": p["Partition"], "fetch_offset": p["FetchOffset"]}
                for t in b.get("Topics") or []
                for p in t.get("Partitions") or []
            ],
        }
    if k == INIT_PRODUCER_ID:
        return {
            "transactional_id": b.get("TransactionalId"),
            "producer_id": b.get("ProducerId", -1),
            "producer_epoch": b.get("ProducerEpoch", -1),
        }
    if k == ADD_PARTITIONS:
        if req.api_version <= 3:
            txns = [
                {
                    "TransactionalId": b["V3AndBelowTransactionalId"],
                    "ProducerId": b["V3AndBelowProducerId"],
                    "ProducerEpoch": b["V3AndBelowProducerEpoch"],
                    "Topics": b["V3AndBelowTopics"],
                }
            ]
        else:
            txns = b.get("Transactions") or []
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
        first = txns[0] if txns else {}
        return {
            "transactional_id": first.get("TransactionalId"),
            "producer_id": first.get("ProducerId"),
            "producer_epoch": first.get("ProducerEpoch"),
            "items": items,
        }
    if k in (ADD_OFFSETS, END_TXN, TXN_OFFSET_COMMIT):
        out = {
            "transactional_id": b.get("TransactionalId"),
            "producer_id": b.get("ProducerId"),
            "producer_epoch": b.get("ProducerEpoch"),
        }
        if k == END_TXN:
            out["committed"] = b.get("Committed")
        else:
            out["group_id"] = b.get("GroupId")
        if k == TXN_OFFSET_COMMIT:
            out["items"] = [
                {"topic": t["Name"], "partition": p["PartitionIndex"], "offset": p["CommittedOffset"]}
                for t in b.get("Topics") or []
                for p in t["Partitions"]
            ]
        return out
    if k == FIND_COORDINATOR:
        keys = b.get("CoordinatorKeys") or ([b["Key"]] if b.get("Key") is not None else [])
        return {"key_type": {0: "group", 1: "transaction"}.get(b.get("KeyType", 0), b.get("KeyType")), "keys": keys}
    return {}


def _first_error(codes: list[int]) -> int:
    return next((c for c in codes if c), 0)


def summarize_response(resp: Response, request: dict[str, Any], names: TopicNames) -> dict[str, Any]:
    """The EOS fields of a response, with ``error_code`` (the first non-zero one) and its name."""
    b, k = resp.body, resp.api_key
    out: dict[str, Any] = {}
    codes: list[int] = [b.get("ErrorCode") or 0]
    if k == PRODUCE:
        items = []
        for t in b.get("Responses") or []:
            topic = _topic(t, names)
            for p in t.get("PartitionResponses") or []:
                items.append(
                    {
                        "topic": topic,
                        "partition": p["Index"],
                        "error_code": p["ErrorCode"],
                        "error": error_name(p["ErrorCode"]),
                        "base_offset": p["BaseOffset"],
                    }
                )
                codes.append(p["ErrorCode"])
        out["items"] = items
    elif k == FETCH:
        out["partitions"] = [
            _fetch_partition(_fetch_topic(t, names), p)
            for t in b.get("Responses") or []
            for p in t.get("Partitions") or []
        ]
        codes += [p["error_code"] for p in out["partitions"]]
    elif k in (INIT_PRODUCER_ID, END_TXN):
        if "ProducerId" in b:
            out.update(producer_id=b["ProducerId"], producer_epoch=b["ProducerEpoch"])
    elif k == ADD_PARTITIONS:
        results = b.get("ResultsByTopicV3AndBelow") or [
            tr for r in b.get("ResultsByTransaction") or [] for tr in r["TopicResults"]
        ]
        out["items"] = [
            {
                "topic": t["Name"],
                "partition": p["PartitionIndex"],
                "error_code": p["PartitionErrorCode"],
                "error": error_name(p["PartitionErrorCode"]),
            }
            for t in results
            for p in t["ResultsByPartition"]
        ]
        codes += [i["error_code"] for i in out["items"]]
    elif k == TXN_OFFSET_COMMIT:
        out["items"] = [
            {
                "topic": t["Name"],
                "partition": p["PartitionIndex"],
                "error_code": p["ErrorCode"],
                "error": error_name(p["ErrorCode"]),
            }
            for t in b.get("Topics") or []
            for p in t["Partitions"]
        ]
        codes += [i["error_code"] for i in out["items"]]
    elif k == FIND_COORDINATOR:
        if "Coordinators" in b:
            out["items"] = [
                {
                    "key": c["Key"],
                    "node_id": c["NodeId"],
                    "error_code": c["ErrorCode"],
                    "error": error_name(c["ErrorCode"]),
                }
                for c in b["Coordinators"]
            ]
            codes += [c["ErrorCode"] for c in b["Coordinators"]]
        else:
            keys = request.get("keys") or [None]
            out["items"] = [
                {
                    "key": keys[0],
                    "node_id": b.get("NodeId"),
                    "error_code": b.get("ErrorCode", 0),
                    "error": error_name(b.get("ErrorCode", 0)),
                }
            ]
    elif k == METADATA:
        out["topics"] = len(b.get("Topics") or [])
    elif k == API_VERSIONS:
        # Tagged fields (v3+): absent from a v0-v2 answer, and a level-0 feature is not listed.
        out["finalized_features"] = {f["Name"]: f["MaxVersionLevel"] for f in b.get("FinalizedFeatures") or []}
    code = _first_error(codes)
    out.update(error_code=code, error=error_name(code))
    return out


def learn_topic_ids(resp: Response, names: TopicNames) -> None:
    """Remember ``TopicId -> Name`` from a Metadata response the proxy relays."""
    for t in resp.body.get("Topics") or []:
        tid, name = t.get("TopicId"), t.get("Name")
        if tid is not None and name and tid.int != 0:
            names[tid] = name


def leaders(resp: Response) -> dict[tuple[str, int], int]:
    """``(topic, partition) -> leader id`` from a Metadata response."""
    return {
        (t["Name"], p["PartitionIndex"]): p["LeaderId"]
        for t in resp.body.get("Topics") or []
        if t.get("Name")
        for p in t.get("Partitions") or []
    }
