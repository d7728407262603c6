"""Saturation in rounds: every mode once per round, in a rotated order, on producers warmed up once.

Why rounds: two modes measured a minute apart on a shared laptop differ by whatever the machine did
in that minute (tens of percent here), far more than the 3 % a transaction is said to cost. Slices
of the same round are seconds apart, so a ratio taken within a round cancels most of the drift;
the rotation (A B C …, B C … A, …) puts no mode always first or always after the same neighbour;
and the spread of a mode over rounds is what an interval is made of (``eoslab.analysis``).

Each mode writes to its own topic; after each slice its records are deleted (DeleteRecords to the
end, segments of 64 MB removed a second later), so a long run at acks=1 does not fill the disk.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from typing import Any

from confluent_kafka import OFFSET_END, TopicPartition

from eoslab._progress import advance
from eoslab._timeouts import CLIENT_CALL
from eoslab.bench import _harness
from eoslab.bench._cpu import CpuMeter, Reading, spent
from eoslab.cluster import Cluster
from eoslab.runs import Matrix, Workload, summary_row

TOPIC_CONFIG = {
    "segment.bytes": str(64 * 2**20),  # small enough that a slice's records leave the disk after the slice
    "file.delete.delay.ms": "1000",  # the deleted segments' files, one second after (default: a minute)
}


def sat_row(
    run_id: str,
    i: int,
    w: Workload,
    client: str,
    records: int,
    seconds: float,
    round_: int,
    position: int,
    commits: int = 0,
    cpu: Reading | None = None,
) -> dict[str, Any]:
    """One saturation row of ``summary`` (the harness per round; the Java peer with round −1), with the CPU
    each process kind spent over its window; ``cpu_s`` and ``cpu_us_per_record`` are the client's."""
    row = summary_row(
        run_id,
        i,
        w,
        client=client,
        phase="saturation",
        round_=round_,
        position=position,
        records=records,
        seconds=seconds,
        commits=commits,
        cpu=cpu,
    )
    row["cpu_s"] = row["cpu_client_s"]
    row["cpu_us_per_record"] = row["cpu_s"] / records * 1e6 if records else float("nan")
    return row


def rotated(items: list[Any], r: int) -> list[Any]:
    """Round ``r``'s order: the list rotated left by ``r``."""
    k = r % len(items) if items else 0
    return items[k:] + items[:k]


def _trim(cluster: Cluster, topic: str, partitions: int) -> None:
    futures = cluster.admin.client.delete_records(
        [TopicPartition(topic, p, OFFSET_END) for p in range(partitions)], request_timeout=CLIENT_CALL
    )
    for f in futures.values():
        f.result(timeout=CLIENT_CALL + 1)


def delete_topics(cluster: Cluster, names: Iterable[str]) -> None:
    """Delete a run's topics as it ends, whatever ended it: an error deleting one is ignored, so that a
    leftover topic does not hide the error that ended the run."""
    for name in names:
        try:
            cluster.admin.delete_topic(name)
        except Exception:  # noqa: BLE001 - a leftover topic must not hide the real error
            pass


def run_rounds(cluster: Cluster, m: Matrix, run_id: str, bar: Any) -> list[dict[str, Any]]:
    """Every workload of ``m`` at saturation, ``m.rounds`` times; one summary row per workload and round."""
    bootstrap = cluster.bootstrap_servers()
    order = list(enumerate(m.workloads))
    topics: dict[int, str] = {}
    producers: dict[int, tuple[Any, list[int]]] = {}
    rows: list[dict[str, Any]] = []
    meter = CpuMeter.of(cluster, os.getpid())  # this process, whose librdkafka threads do the producing
    try:
        for i, w in order:
            bar.set_description(f"{w.label}: topic and warm-up")
            name = f"bench-{run_id}-{w.label}-sat-{uuid.uuid4().hex[:6]}".replace("_", "-")
            cluster.admin.create_topic(name, partitions=w.partitions, config=TOPIC_CONFIG)
            topics[i] = name
            producers[i] = _harness.saturation_producer(bootstrap, name, w)
        for r in range(m.rounds):
            for pos, (i, w) in enumerate(rotated(order, r)):
                bar.set_description(f"round {r + 1}/{m.rounds}: {w.label}")
                p, errors = producers[i]
                cpu0 = meter.read()
                s = _harness.saturation_slice(
                    p, errors, topics[i], w, m.slice_s(w), m.min_commits if w.transactional else 0
                )
                cpu = spent(cpu0, meter.read())
                rows.append(sat_row(run_id, i, w, "eoslab", s.records, s.seconds, r, pos, s.commits, cpu))
                _trim(cluster, topics[i], w.partitions)
                advance(bar, s.seconds)
    finally:
        for p, _ in producers.values():
            p.flush(CLIENT_CALL)
        delete_topics(cluster, topics.values())
    return rows
