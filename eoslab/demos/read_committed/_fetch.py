"""How the broker filters for read_committed: the Fetch on the wire, the ``.txnindex`` on disk.

A ``read_committed`` Fetch (IsolationLevel 1) is answered with the batches below the last
stable offset — aborted ones INCLUDED — plus the list of aborted transactions in that range
(producer id, first offset), which the leader reads from the segments' ``.txnindex`` files.
The CLIENT drops the batches of those producers from their first offset up to their ABORT
marker (KIP-98): the broker never rewrites a batch for a consumer. The proxy decodes both.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from eoslab import inspect as ins
from eoslab.demos._clients import consumer, run_id
from eoslab.demos.read_committed._log import WrittenLog
from eoslab.faults import Proxy, Trace

if TYPE_CHECKING:
    import pandas as pd


def traced_read(log: WrittenLog, isolation: str = "read_committed", timeout: float = 10.0) -> tuple[list[int], Trace]:
    """Read the partition from 0 with a consumer THROUGH the proxy; the offsets it returned and its Fetch rows."""
    from confluent_kafka import TopicPartition

    from eoslab._wait import wait_until

    end = ins.partition_offsets(log.cluster, log.topic, log.partition)
    stop = end.last_stable if isolation == "read_committed" else end.high_watermark
    client_id = f"rc-fetch-{run_id()}"
    c = consumer(
        log.cluster,
        f"rc-fetch-{run_id()}",
        isolation=isolation,
        proxied=True,
        conf={"client.id": client_id, "fetch.wait.max.ms": 100},
    )
    got: list[int] = []
    try:
        c.assign([TopicPartition(log.topic, log.partition, 0)])

        def done() -> bool:
            got.extend(m.offset() for m in c.consume(100, 0.2) if m.error() is None)  # type: ignore[misc]
            (pos,) = c.position([TopicPartition(log.topic, log.partition)])
            return pos.offset >= stop

        wait_until(done, timeout=timeout, interval=0.0, what=f"a traced {isolation} read up to offset {stop}")
    finally:
        c.close()
    rows = Proxy.connect(log.cluster).trace(client_id=client_id, api="Fetch")
    return sorted(got), rows


def _exchanges(rows: list[dict[str, Any]], topic: str, partition: int) -> Iterator[tuple[Any, Any, dict[str, Any]]]:
    """Each data-carrying answer for the partition: (the request's isolation level, the offset it asked
    from, the response's partition entry)."""
    for r in rows:
        req, resp = r.get("request") or {}, r.get("response") or {}
        asked = {(p["topic"], p["partition"]): p["fetch_offset"] for p in req.get("partitions") or []}
        for p in resp.get("partitions") or []:
            if (p["topic"], p["partition"]) == (topic, partition) and p["batches"]:
                yield req.get("isolation_level"), asked.get((topic, partition)), p


def fetch_frame(rows: list[dict[str, Any]], topic: str, partition: int) -> pd.DataFrame:
    """The Fetch responses that carried data for the partition: offsets asked, HW, LSO, aborted list, batches."""
    import pandas as pd

    out = [
        {
            "isolation": isolation,
            "fetch_offset": offset,
            "high_watermark": p["high_watermark"],
            "last_stable_offset": p["last_stable_offset"],
            "aborted_transactions": p["aborted_transactions"],
            "batches (offsets, producer, kind)": [
                f"{b['base_offset']}-{b['last_offset']} pid {b['producer_id']} "
                + (f"{b['marker']} marker" if b["control"] else "txn" if b["transactional"] else "plain")
                for b in p["batches"]
            ],
        }
        for isolation, offset, p in _exchanges(rows, topic, partition)
    ]
    return pd.DataFrame(out)


def txn_index_frame(log: WrittenLog) -> pd.DataFrame:
    """The ``.txnindex`` entries of the partition on its leader (DumpLogSegments)."""
    return ins.txn_index(log.cluster, log.topic, log.partition).to_frame()


def fetch_mermaid(rows: list[dict[str, Any]], topic: str, partition: int, returned: list[int]) -> str:
    """The consumer's data-carrying Fetch exchanges as a Mermaid sequence diagram (this run's numbers)."""
    leader = next((r["broker"] for r in rows), "?")
    lines = ["sequenceDiagram", "    participant C as read_committed consumer", f"    participant L as Broker {leader}"]
    for isolation, offset, p in _exchanges(rows, topic, partition):
        lines.append(f"    C->>L: Fetch {isolation} from offset {offset}")
        aborted = ", ".join(f"pid {a['producer_id']} from {a['first_offset']}" for a in p["aborted_transactions"] or [])
        first, last = p["batches"][0]["base_offset"], p["batches"][-1]["last_offset"]
        lines.append(
            f"    L-->>C: batches {first}..{last} (aborted ones included), HW {p['high_watermark']}, "
            f"LSO {p['last_stable_offset']}, aborted: [{aborted or 'none'}]"
        )
    kept = ", ".join(map(str, returned)) or "nothing"
    lines.append(f"    Note over C: drops aborted batches and markers itself, returns offsets {kept}")
    return "\n".join(lines) + "\n"
