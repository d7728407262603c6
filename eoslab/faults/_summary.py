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

Table-driven: :data:`SUMMARIZERS` holds one entry per API the trace opens (a
request summarizer and a response summarizer), so teaching the trace a new API
is adding one entry; which requests and responses the proxy decodes at all
(:data:`EOS_API_KEYS`, :data:`DECODED_RESPONSES`) follows from the table.
The per-API summarizers live in :mod:`eoslab.faults._summarizers`.
"""

from __future__ import annotations

from typing import Any

from eoslab.faults._summarizers import (
    ADD_OFFSETS,
    ADD_PARTITIONS,
    API_VERSIONS,
    END_TXN,
    FETCH,
    FIND_COORDINATOR,
    INIT_PRODUCER_ID,
    METADATA,
    PRODUCE,
    TXN_OFFSET_COMMIT,
    Summarizer,
    TopicNames,
    add_partitions_request,
    add_partitions_response,
    api_versions_response,
    end_txn_request,
    error_name,
    fetch_request,
    fetch_response,
    find_coordinator_request,
    find_coordinator_response,
    group_txn_request,
    init_producer_id_request,
    metadata_response,
    no_fields,
    produce_request,
    produce_response,
    producer_id_response,
    txn_offset_commit_request,
    txn_offset_commit_response,
)
from eoslab.protocol import Request, Response

__all__ = [
    "API_VERSIONS",
    "DECODED_RESPONSES",
    "EOS_API_KEYS",
    "EOS_API_NAMES",
    "METADATA",
    "PRODUCE",
    "SUMMARIZERS",
    "TopicNames",
    "error_name",
    "leaders",
    "learn_topic_ids",
    "summarize_request",
    "summarize_response",
]

# One entry per API the trace opens: (request summarizer or None when its requests are not decoded, response one).
SUMMARIZERS: dict[int, Summarizer] = {
    PRODUCE: Summarizer(produce_request, produce_response),
    FETCH: Summarizer(fetch_request, fetch_response),
    METADATA: Summarizer(None, metadata_response),  # read for topic ids only
    FIND_COORDINATOR: Summarizer(find_coordinator_request, find_coordinator_response),
    API_VERSIONS: Summarizer(None, api_versions_response),  # read for the finalized features only
    INIT_PRODUCER_ID: Summarizer(init_producer_id_request, producer_id_response),
    ADD_PARTITIONS: Summarizer(add_partitions_request, add_partitions_response),
    ADD_OFFSETS: Summarizer(group_txn_request, no_fields),
    END_TXN: Summarizer(end_txn_request, producer_id_response),
    TXN_OFFSET_COMMIT: Summarizer(txn_offset_commit_request, txn_offset_commit_response),
}
EOS_API_KEYS = frozenset(k for k, s in SUMMARIZERS.items() if s.request is not None)
DECODED_RESPONSES = frozenset(SUMMARIZERS)
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


def summarize_request(req: Request, names: TopicNames) -> dict[str, Any]:
    """The EOS fields of a request; ``{}`` for APIs the trace does not open."""
    entry = SUMMARIZERS.get(req.api_key)
    if entry is None or entry.request is None:
        return {}
    return entry.request(req, names)


def summarize_response(resp: Response, request: dict[str, Any], names: TopicNames) -> dict[str, Any]:
    """The EOS fields of a response, with ``error_code`` (the first non-zero one) and its name."""
    entry = SUMMARIZERS.get(resp.api_key)
    out, codes = entry.response(resp.body, request, names) if entry is not None else ({}, [])
    code = next((c for c in [resp.body.get("ErrorCode") or 0, *codes] if c), 0)
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
