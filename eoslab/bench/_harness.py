"""The kit's own producer harness (librdkafka through confluent-kafka).

Two phases per workload, because one phase cannot give both figures:

* saturation, in time slices (:func:`saturation_slice`): records as fast as the client
  queues them for a slice of wall time, then a drain; throughput is records / (first
  produce → last ack). Delivery reports only for errors (``delivery.report.only.error``):
  a Python callback per record would measure Python. Every producer is warmed up first
  (:func:`warm_up`: connected to every leader, producer id acquired, a first batch acked),
  in every mode alike, so no slice pays for a connection or an InitProducerId.
* fixed offered load: ``rate`` records/s for ``duration_s``; each record carries its send
  time and sequence number in its first 16 bytes, so a delivery report gives the ack
  latency and two consumers (``read_committed`` and ``read_uncommitted``, both set
  explicitly) give the end-to-end latency. Send times are the pacing schedule's
  intended times, so a producer stalled in ``commit_transaction`` is charged for the stall
  (no coordinated omission).
"""

from __future__ import annotations

import struct
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from eoslab._librdkafka import BENCH
from eoslab._timeouts import CLIENT_CALL, CLIENT_DRAIN
from eoslab.errors import ClientError
from eoslab.runs import Workload

HEADER = struct.Struct(">qq")  # send time (ns since the epoch), sequence number
ISOLATIONS = ("read_committed", "read_uncommitted")
SLICE_CAP = 3.0
"""A transactional slice runs on past its planned length until it holds its minimum of commits, but not past
three times that length: a commit that drains the local queue at a loaded machine's pace may take far longer
than its interval, and the report counts the commits each slice really made."""
CATCH_UP = 15.0
"""After the last ack, the consumers read what is left: a fetch returns within fetch.wait.max.ms (50 ms) of
data being readable; 15 s covers a consumer still joining on a busy laptop."""


class BenchError(ClientError):
    """A benchmark phase failed (delivery errors, a stuck consumer, a tool that failed)."""


@dataclass
class Saturation:
    records: int
    seconds: float
    errors: int = 0
    commits: int = 0

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


@dataclass
class LatencySamples:
    """Per-record samples of the fixed-load phase: (kind, seq, latency in ms)."""

    kind: list[str] = field(default_factory=list)
    seq: list[int] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    offered: int = 0
    seconds: float = 0.0
    errors: int = 0

    def add(self, kind: str, seq: int, ms: float) -> None:
        self.kind.append(kind)
        self.seq.append(seq)
        self.latency_ms.append(ms)


def payload(w: Workload) -> bytes:
    """The saturation phase's record value, the same bytes for both clients (the Java tool reads them from a
    file): a constant, so neither client spends time making up bytes."""
    return b"a" * w.record_size


def _producer(bootstrap: str, w: Workload, extra: dict[str, Any]) -> Producer:
    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "logger": BENCH, **w.librdkafka_conf(), **extra}
    if w.transactional:
        conf["transactional.id"] = f"eoslab-bench-{uuid.uuid4().hex[:10]}"
    p = Producer(conf)
    if w.transactional:
        p.init_transactions(CLIENT_CALL)
    return p


def warm_up(p: Producer, topic: str, w: Workload, value: bytes) -> None:
    """One record to every partition, acked (in a committed transaction for a transactional producer):
    the producer is then connected to every leader and holds its producer id, in every mode alike."""
    try:
        if w.transactional:
            p.begin_transaction()
        for part in range(w.partitions):
            _produce(p, topic, value, partition=part)
        if w.transactional:
            p.commit_transaction(CLIENT_CALL)
        if p.flush(CLIENT_CALL) != 0:
            raise BenchError(f"{w.label}: the warm-up records to {topic!r} were not acknowledged in {CLIENT_CALL:g} s.")
    except KafkaException as exc:
        raise BenchError(f"{w.label}: the producer failed its warm-up on {topic!r}: {exc.args[0].str()}.") from None


def saturation_producer(bootstrap: str, topic: str, w: Workload) -> tuple[Producer, list[int]]:
    """A producer for saturation slices, warmed up; the list counts its delivery errors."""
    errors = [0]

    def on_error(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            errors[0] += 1

    p = _producer(bootstrap, w, {"delivery.report.only.error": True, "on_delivery": on_error})
    warm_up(p, topic, w, payload(w))
    return p, errors


class _Committer:
    """Commit every ``commit_ms`` or every ``commit_every`` records; a no-op without transactions."""

    def __init__(self, p: Producer, w: Workload) -> None:
        self.p, self.w = p, w
        self.count, self.started = 0, time.monotonic()
        self.commits = 0
        if w.transactional:
            p.begin_transaction()

    def after_send(self) -> None:
        if not self.w.transactional:
            return
        self.count += 1
        due = (self.w.commit_every and self.count >= self.w.commit_every) or (
            self.w.commit_ms and (time.monotonic() - self.started) * 1000 >= self.w.commit_ms
        )
        if due:
            self.p.commit_transaction(CLIENT_CALL)
            self.commits += 1
            self.p.begin_transaction()
            self.count, self.started = 0, time.monotonic()

    def finish(self) -> None:
        if self.w.transactional:
            self.p.commit_transaction(CLIENT_CALL)
            self.commits += 1


def _produce(
    p: Producer, topic: str, value: bytes, on_delivery: Callable[..., None] | None = None, partition: int = -1
) -> None:
    while True:
        try:
            if on_delivery is None:
                p.produce(topic, value, partition=partition)
            else:
                p.produce(topic, value, on_delivery=on_delivery, partition=partition)
            return
        except BufferError:  # the local queue is full (queue.buffering.max.kbytes): serve reports, then retry
            p.poll(0.002)


def saturation_slice(
    p: Producer,
    errors: list[int],
    topic: str,
    w: Workload,
    seconds: float,
    min_commits: int = 0,
    tick: Callable[[int], None] = lambda n: None,
) -> Saturation:
    """Produce as fast as the bounded local queue allows for ``seconds`` (and, transactional, until
    ``min_commits`` commits, for at most :data:`SLICE_CAP` × ``seconds``), then drain (commit, flush).

    The timer runs from the first produce to the last ack, on a producer already warmed up.
    """
    value = payload(w)
    chunk = 200  # records between two looks at the clock; a commit is still checked after every record
    before = errors[0]
    n = 0
    try:
        t0 = time.perf_counter()
        end, cap = t0 + seconds, t0 + SLICE_CAP * seconds
        txn = _Committer(p, w)
        while (now := time.perf_counter()) < end or (txn.commits < min_commits and now < cap):
            for _ in range(chunk):
                _produce(p, topic, value)
                txn.after_send()
            n += chunk
            p.poll(0)
            tick(chunk)
        txn.finish()
        if p.flush(CLIENT_DRAIN) != 0:
            raise BenchError(
                f"{w.label}: records still unacknowledged {CLIENT_DRAIN:g} s after the last send to {topic!r}."
            )
        took = time.perf_counter() - t0
    except KafkaException as exc:
        raise BenchError(f"{w.label}: the producer failed on {topic!r}: {exc.args[0].str()}.") from None
    if errors[0] != before:
        raise BenchError(
            f"{w.label}: {errors[0] - before} of {n} records failed to reach {topic!r}: is the cluster healthy?"
        )
    return Saturation(n, took, 0, txn.commits)


def _consume(
    bootstrap: str,
    topic: str,
    partitions: int,
    isolation: str,
    until: threading.Event,
    expected: int,
    out: LatencySamples,
    lock: threading.Lock,
) -> None:
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "logger": BENCH,
            "group.id": f"eoslab-bench-{uuid.uuid4().hex[:8]}",  # required by librdkafka; offsets never committed
            "isolation.level": isolation,  # explicit: librdkafka's default is read_committed, Java's read_uncommitted
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 50,  # a fetch returns at most 50 ms after data is readable
        }
    )
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen = 0
    try:
        while seen < expected and not until.is_set():
            for m in c.consume(500, 0.1):
                if m.error() is not None:
                    continue
                now = time.time_ns()
                sent, seq = HEADER.unpack_from(m.value() or bytes(16))
                if seq < 0:
                    continue  # a warm-up record
                with lock:
                    out.add(f"e2e_{isolation}", seq, (now - sent) / 1e6)
                seen += 1
    finally:
        c.close()


def fixed_load(
    bootstrap: str,
    topic: str,
    w: Workload,
    tick: Callable[[int], None] = lambda n: None,
) -> LatencySamples:
    out = LatencySamples()
    lock = threading.Lock()
    total = int(w.rate * w.duration_s)
    out.offered = total
    stop = threading.Event()
    consumers = [
        threading.Thread(
            target=_consume, args=(bootstrap, topic, w.partitions, iso, stop, total, out, lock), daemon=True
        )
        for iso in ISOLATIONS
    ]
    for t in consumers:
        t.start()

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        now = time.time_ns()
        sent, seq = HEADER.unpack_from(msg.value() or bytes(16))
        if err is not None:
            out.errors += 1
            return
        with lock:
            out.add("ack", seq, (now - sent) / 1e6)

    p = _producer(bootstrap, w, {})
    warm_up(p, topic, w, HEADER.pack(0, -1) + bytes(w.record_size - HEADER.size))  # seq -1: not a sample
    pad = bytes(w.record_size - HEADER.size)
    time.sleep(0.5)  # the consumers' first fetch is under way, so the first records do not wait on a join
    try:
        txn = _Committer(p, w)
        t0_ns = time.time_ns()
        t0 = time.perf_counter()
        for seq in range(total):
            due = t0 + seq / w.rate
            while (ahead := due - time.perf_counter()) > 0:
                p.poll(min(ahead, 0.002))
            sent = t0_ns + int(seq * 1e9 / w.rate)  # the intended send time: stalls are charged
            _produce(p, topic, HEADER.pack(sent, seq) + pad, on_delivery)
            txn.after_send()
            if seq % w.rate == 0:
                tick(w.rate)
        txn.finish()
        p.flush(CLIENT_CALL)
        out.seconds = time.perf_counter() - t0
    except KafkaException as exc:
        stop.set()
        raise BenchError(f"{w.label}: the producer failed on {topic!r}: {exc.args[0].str()}.") from None
    for t in consumers:
        t.join(timeout=CATCH_UP)
    stop.set()
    return out
