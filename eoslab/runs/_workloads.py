"""Producer modes and workloads: configuration as data, for librdkafka AND for Kafka's Java tool.

Every batching setting is explicit on both sides, because the two clients' defaults
differ (librdkafka: ``batch.size`` 1 MB, ``max.in.flight`` 1,000,000, idempotence off;
Java 4.x: ``batch.size`` 16 KB, ``max.in.flight`` 5, idempotence on). A figure measured
with defaults would compare the defaults, not the mode.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from eoslab.errors import EoslabError

MODES = ("acks1", "acks_all", "idempotent", "transactional")
BASELINE = "acks_all"
"""Overheads are measured against acks=all without idempotence: the course's durability, no EOS."""


class WorkloadError(EoslabError):
    """A workload or matrix that cannot be run as given."""


@dataclass(frozen=True)
class Workload:
    """One producer mode with its batching, and the two phases it is measured in.

    ``count`` records at saturation give the throughput; ``rate`` records/s for
    ``duration_s`` give latency at a FIXED offered load (at saturation latency only
    measures the queue in front of the broker).
    """

    mode: str
    commit_ms: int | None = None  # transactional: commit every T ms (Java's --transaction-duration-ms)
    commit_every: int | None = None  # transactional: or every N records (librdkafka side only)
    record_size: int = 1024
    count: int = 100_000
    rate: int = 1000
    duration_s: float = 5.0
    linger_ms: int = 5
    batch_size: int = 65536
    max_in_flight: int = 5  # Java's default; the most idempotence allows (5 batches remembered)
    partitions: int = 3

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise WorkloadError(f"Unknown producer mode {self.mode!r}: use one of {', '.join(MODES)}.")
        if self.mode == "transactional" and not (self.commit_ms or self.commit_every):
            raise WorkloadError("A transactional workload needs commit_ms or commit_every: say how often it commits.")
        if self.record_size < 16:
            raise WorkloadError(f"record_size={self.record_size} is too small: records carry 16 bytes of header.")

    @property
    def label(self) -> str:
        """The name a figure is shown under: ``txn_100ms``, ``txn_every_500``, or the mode."""
        if self.mode != "transactional":
            return self.mode
        return f"txn_{self.commit_ms}ms" if self.commit_ms else f"txn_every_{self.commit_every}"

    @property
    def transactional(self) -> bool:
        return self.mode == "transactional"

    @property
    def idempotent(self) -> bool:
        return self.mode in ("idempotent", "transactional")

    @property
    def acks(self) -> str:
        return "1" if self.mode == "acks1" else "all"

    def common_conf(self) -> dict[str, Any]:
        """The settings both clients get, by Kafka's own property names."""
        return {
            "acks": self.acks,
            "enable.idempotence": self.idempotent,  # explicit: the clients' defaults disagree
            "linger.ms": self.linger_ms,
            "batch.size": self.batch_size,
            "max.in.flight.requests.per.connection": self.max_in_flight,
            "compression.type": "none",  # measure the protocol, not a codec
        }

    def librdkafka_conf(self) -> dict[str, Any]:
        conf = self.common_conf()
        conf.update(
            {
                "batch.num.messages": 100_000,  # let batch.size, not librdkafka's count cap (10,000), close a batch
                "queue.buffering.max.messages": 1_000_000,  # the local queue is not what we measure
            }
        )
        return conf

    def java_props(self) -> list[str]:
        """``--producer-props`` for ProducerPerformance (values as Java reads them)."""
        out = []
        for k, v in self.common_conf().items():
            out.append(f"{k}={str(v).lower() if isinstance(v, bool) else v}")
        return out

    def record(self) -> dict[str, Any]:
        """One row of ``params.parquet``."""
        row = asdict(self)
        row.update(label=self.label, acks=self.acks, idempotent=self.idempotent, transactional=self.transactional)
        return row


@dataclass(frozen=True)
class Matrix:
    name: str
    workloads: tuple[Workload, ...]
    java_peer: bool = True
    repeats: int = 1
    notes: tuple[str, ...] = field(default_factory=tuple)


def _modes(**kw: Any) -> tuple[Workload, ...]:
    commit_intervals = kw.pop("commit_intervals")
    base = [Workload("acks1", **kw), Workload("acks_all", **kw), Workload("idempotent", **kw)]
    base += [Workload("transactional", commit_ms=ms, **kw) for ms in commit_intervals]
    return tuple(base)


MATRICES: dict[str, Matrix] = {
    # ≤ 3 min on 2 cores: 6 workloads × (saturation + Java peer + 4 s at 1000 records/s).
    "default": Matrix("default", _modes(count=120_000, rate=1000, duration_s=4.0, commit_intervals=(20, 100, 500))),
    # The test suite's and notebook 06's matrix: seconds, no Java peer (a JVM start is 2-3 s here).
    "quick": Matrix(
        "quick", _modes(count=10_000, rate=500, duration_s=2.0, commit_intervals=(50, 200)), java_peer=False
    ),
}


def matrix(name: str, **overrides: Any) -> Matrix:
    """A named matrix, optionally with fields of every workload replaced (``count=``, ``record_size=``...)."""
    if name not in MATRICES:
        raise WorkloadError(f"Unknown matrix {name!r}: use one of {', '.join(MATRICES)}.")
    m = MATRICES[name]
    java_peer = overrides.pop("java_peer", m.java_peer)
    if overrides:
        return replace(m, workloads=tuple(replace(w, **overrides) for w in m.workloads), java_peer=java_peer)
    return replace(m, java_peer=java_peer)
