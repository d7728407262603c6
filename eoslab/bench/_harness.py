"""The kit's own producer harness (librdkafka through confluent-kafka).

Two phases per workload, because one phase cannot give both figures:

* saturation: ``count`` records as fast as the client queues them; throughput is
  records / (first produce → last ack). Delivery reports only for errors
  (``delivery.report.only.error``): a Python callback per record would measure Python.
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

from eoslab._timeouts import CLIENT_CALL, CLIENT_DRAIN
from eoslab.clients import LIBRDKAFKA_LOGGER
from eoslab.errors import EoslabError
from eoslab.runs import Workload

HEADER = struct.Struct(">qq")  # send time (ns since the epoch), sequence number
ISOLATIONS = ("read_committed", "read_uncommitted")
CATCH_UP = 15.0
"""After the last ack, the consumers read what is left: a fetch returns within fetch.wait.max.ms (50 ms) of
data being readable; 15 s covers a consumer still joining on a busy laptop."""


class BenchError(EoslabError):
    """A benchmark phase failed (delivery errors, a stuck consumer, a tool that failed)."""


@dataclass
class Saturation:
    records: int
    seconds: float
    errors: int

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


def _producer(bootstrap: str, w: Workload, extra: dict[str, Any]) -> Producer:
    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "logger": LIBRDKAFKA_LOGGER, **w.librdkafka_conf(), **extra}
    if w.transactional:
        conf["transactional.id"] = f"eoslab-bench-{uuid.uuid4().hex[:10]}"
    p = Producer(conf)
    if w.transactional:
        p.init_transactions(CLIENT_CALL)
    return p


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


def _produce(p: Producer, topic: str, value: bytes, on_delivery: Callable[..., None] | None = None) -> None:
    while True:
        try:
            if on_delivery is None:
                p.produce(topic, value)
            else:
                p.produce(topic, value, on_delivery=on_delivery)
            return
        except BufferError:  # the local queue is full: serve delivery reports, then retry
            p.poll(0.005)


def saturation(bootstrap: str, topic: str, w: Workload, tick: Callable[[int], None] = lambda n: None) -> Saturation:
    errors = 0

    def on_error(err: KafkaError | None, msg: Message) -> None:
        nonlocal errors
        if err is not None:
            errors += 1

    p = _producer(bootstrap, w, {"delivery.report.only.error": True, "on_delivery": on_error})
    value = bytes(w.record_size)
    step = max(1, w.count // 50)
    try:
        t0 = time.perf_counter()
        txn = _Committer(p, w)
        for i in range(w.count):
            _produce(p, topic, value)
            txn.after_send()
            if i % step == 0:
                p.poll(0)
                tick(step)
        txn.finish()
        if p.flush(CLIENT_DRAIN) != 0:
            raise BenchError(
                f"{w.label}: records still unacknowledged {CLIENT_DRAIN:g} s after the last send to {topic!r}."
            )
        seconds = time.perf_counter() - t0
    except KafkaException as exc:
        raise BenchError(f"{w.label}: the producer failed on {topic!r}: {exc.args[0].str()}.") from None
    if errors:
        raise BenchError(f"{w.label}: {errors} of {w.count} records failed to reach {topic!r}: is the cluster healthy?")
    return Saturation(w.count, seconds, errors)


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
            "logger": LIBRDKAFKA_LOGGER,
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
