"""A duplicate from the network: resend a captured Produce on a connection the proxy owns.

The frame goes out byte for byte as the client sent it (same producer id,
epoch, sequence, correlation id) to the partition's CURRENT leader, found with
a fresh Metadata request, and the broker's answer goes back to the caller of
the control API, never to the client: the client does not know it happened.
"""

from __future__ import annotations

import asyncio
import struct
import time
from typing import TYPE_CHECKING, Any

from eoslab.faults._errors import FaultRuleError
from eoslab.faults._exchange import exchange
from eoslab.faults._summary import leaders, summarize_response
from eoslab.protocol import ProtocolError, decode_response, encode_request

if TYPE_CHECKING:
    from eoslab.faults._proxy import ProxyEngine
    from eoslab.faults._store import Capture

REPLAY_CLIENT = "eoslab-proxy"
METADATA_TIMEOUT = 3.0  # one broker's Metadata answer; a broker that takes longer is skipped for the next


async def current_leader(engine: ProxyEngine, topic: str, partition: int) -> int:
    frame = encode_request(
        "Metadata",
        12,
        1,
        REPLAY_CLIENT,
        {"Topics": [{"Name": topic}], "AllowAutoTopicCreation": False, "IncludeTopicAuthorizedOperations": False},
        schemas=engine.schemas,
    )
    errors = []
    for b in engine.topology.brokers:
        try:
            data = await exchange(b.proxied_address(), frame, timeout=METADATA_TIMEOUT)
            assert data is not None
            found = leaders(decode_response(data, "Metadata", 12, schemas=engine.schemas)).get((topic, partition))
            if found is not None and found >= 0:
                return found
            errors.append(f"{b.name}: no leader for {topic}-{partition}")
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ProtocolError) as exc:
            errors.append(f"{b.name}: {type(exc).__name__} {exc}")
    raise FaultRuleError(f"No broker named a leader for {topic}-{partition} ({'; '.join(errors)}).")


async def replay(engine: ProxyEngine, cap: Capture, broker: int | None = None) -> dict[str, Any]:
    """Send ``cap`` again; return the new trace row (with the broker's decoded answer)."""
    item = cap.items[0]
    if broker is None:
        broker = await current_leader(engine, item["topic"], item["partition"])
    node = engine.topology.broker(broker)
    payload = cap.payload
    api_key, version, corr = struct.unpack_from(">hhi", payload, 0)
    request = {"acks": cap.acks, "items": [dict(i) for i in cap.items]}
    row = engine.trace.add(
        conn=0,
        client_id=cap.client_id,
        broker=broker,
        api="Produce",
        version=version,
        correlation_id=corr,
        via="proxy",
        request=request,
        note=f"replay of trace row {cap.row_id} by the proxy; the client never sees the answer",
    )
    try:
        data = await exchange(node.proxied_address(), cap.frame, expect_response=cap.acks != 0)
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as exc:
        row["fate"] = "no response"
        raise FaultRuleError(f"The replay to {node.name} got no answer ({type(exc).__name__}: {exc}).") from None
    row["response_time"] = time.time()
    if data is None:
        row["fate"] = "no response (acks=0)"
        return row
    row["fate"] = "answered to the control API"
    row["response"] = summarize_response(
        decode_response(data, api_key, version, schemas=engine.schemas), request, engine.topic_names
    )
    return row
