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
import time
import uuid
from collections.abc import Iterable
from typing import Any

from confluent_kafka import OFFSET_END, TopicPartition

from eoslab._progress import advance
from eoslab._timeouts import CLIENT_CALL
from eoslab.bench import _harness
from eoslab.bench._cpu import CpuMeter, Reading, spent
from eoslab.bench._warmup import NO_WARMUP, WARMUP_SLICE_S, Warmup, compiler_cores, compilers, geo_mean, warmed
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


class Trims:
    """Each topic's records deleted after its slice WITHOUT waiting: the brokers answer a DeleteRecords only
    when every replica has moved its log start (~0.5 s here, 3 s a round of six modes); the next slice of other
    topics runs meanwhile, and a topic's own trim is awaited before its next slice."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.pending: dict[str, list[Any]] = {}

    def start(self, topic: str, partitions: int) -> None:
        self.wait(topic)
        futures = self.cluster.admin.client.delete_records(
            [TopicPartition(topic, p, OFFSET_END) for p in range(partitions)], request_timeout=CLIENT_CALL
        )
        self.pending[topic] = list(futures.values())

    def wait(self, topic: str) -> None:
        for f in self.pending.pop(topic, []):
            f.result(timeout=CLIENT_CALL + 1)

    def wait_all(self) -> None:
        for topic in list(self.pending):
            self.wait(topic)


def _trim(cluster: Cluster, topic: str, partitions: int) -> None:
    """Delete ``topic``'s records now and wait for the answer (:class:`Trims` without the overlap)."""
    trims = Trims(cluster)
    trims.start(topic, partitions)
    trims.wait(topic)


def delete_topics(cluster: Cluster, names: Iterable[str]) -> None:
    """Delete a run's topics as it ends, whatever ended it: an error deleting one is ignored, so that a
    leftover topic does not hide the error that ended the run."""
    for name in names:
        try:
            cluster.admin.delete_topic(name)
        except Exception:  # noqa: BLE001 - a leftover topic must not hide the real error
            pass


Producers = dict[int, tuple[Any, list[int]]]


def _open(cluster: Cluster, m: Matrix, run_id: str, bar: Any, topics: dict[int, str], producers: Producers) -> None:
    """Each workload's topic and warmed-up producer (into ``topics`` and ``producers``, so a failure part way
    still closes what was opened)."""
    bootstrap = cluster.bootstrap_servers()
    for i, w in enumerate(m.workloads):
        bar.set_description(f"{w.label}: topic and warm-up")
        name = f"bench-{run_id}-{w.label}-sat-{uuid.uuid4().hex[:6]}".replace("_", "-")
        cluster.admin.create_topic(name, partitions=w.partitions, config=TOPIC_CONFIG)
        topics[i] = name
        producers[i] = _harness.saturation_producer(bootstrap, name, w)


def _warm_up(
    cluster: Cluster, m: Matrix, topics: dict[int, str], producers: Producers, trims: Trims, bar: Any
) -> Warmup:
    """Rounds of every mode in short slices, not recorded, until the brokers are warm (:mod:`._warmup`) or the
    matrix's ``warmup_max_s`` would be passed by another round."""
    if m.warmup_max_s <= 0:
        return NO_WARMUP
    brokers = (
        [s.pid for s in cluster.status() if s.role == "broker" and s.pid] if cluster.backend.name == "local" else []
    )
    durations: list[float] = []
    rates: list[float] = []
    jit: list[float] = []
    while True:
        bar.set_description(f"warm-up round {len(durations) + 1}: the brokers' JIT")
        t0, c0 = time.monotonic(), compilers(brokers)
        per = []
        for i, w in enumerate(m.workloads):
            trims.wait(topics[i])
            p, errors = producers[i]
            per.append(_harness.saturation_slice(p, errors, topics[i], w, WARMUP_SLICE_S).records_per_s)
            trims.start(topics[i], w.partitions)
        took = time.monotonic() - t0
        durations.append(took)
        rates.append(geo_mean(per))
        jit.append(compiler_cores(c0, compilers(brokers), took))
        advance(bar, took)
        reason = warmed(rates, jit) or ("cap" if sum(durations) + took > m.warmup_max_s else None)
        if reason:
            return Warmup(tuple(durations), tuple(rates), tuple(jit), reason)


def run_rounds(cluster: Cluster, m: Matrix, run_id: str, bar: Any) -> tuple[list[dict[str, Any]], Warmup]:
    """Every workload of ``m`` at saturation, ``m.rounds`` times, after the brokers' warm-up; one summary row per
    workload and round, and what the warm-up did."""
    order = list(enumerate(m.workloads))
    topics: dict[int, str] = {}
    producers: Producers = {}
    rows: list[dict[str, Any]] = []
    meter = CpuMeter.of(cluster, os.getpid())  # this process, whose librdkafka threads do the producing
    trims = Trims(cluster)
    try:
        _open(cluster, m, run_id, bar, topics, producers)
        warm = _warm_up(cluster, m, topics, producers, trims, bar)
        for r in range(m.rounds):
            for pos, (i, w) in enumerate(rotated(order, r)):
                bar.set_description(f"round {r + 1}/{m.rounds}: {w.label}")
                p, errors = producers[i]
                trims.wait(topics[i])
                cpu0 = meter.read()
                s = _harness.saturation_slice(
                    p, errors, topics[i], w, m.slice_s(w), m.min_commits if w.transactional else 0
                )
                cpu = spent(cpu0, meter.read())
                rows.append(sat_row(run_id, i, w, "eoslab", s.records, s.seconds, r, pos, s.commits, cpu))
                trims.start(topics[i], w.partitions)
                advance(bar, s.seconds)
        trims.wait_all()
    finally:
        for p, _ in producers.values():
            p.flush(CLIENT_CALL)
        delete_topics(cluster, topics.values())
    return rows, warm
