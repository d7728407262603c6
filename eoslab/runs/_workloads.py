"""Producer modes and workloads: configuration as data, for librdkafka AND for Kafka's Java tool.

Every batching setting is explicit on both sides, because the two clients' defaults
differ (librdkafka: ``batch.size`` 1 MB, ``max.in.flight`` 1,000,000, idempotence off, a 1 GB
local queue; Java 4.x: ``batch.size`` 16 KB, ``max.in.flight`` 5, idempotence on, ``buffer.memory``
32 MB). A figure measured with defaults would compare the defaults, not the mode.

A matrix is measured in ROUNDS: every mode once per round (A B C … then B C … A …), each for a
slice of wall time long enough for at least :data:`MIN_COMMITS` commits at the longest commit
interval, so that the machine's drift falls on every mode alike and the spread over rounds gives
an interval (see :mod:`eoslab.bench.producers`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from eoslab.errors import DataError

MODES = ("acks1", "acks_all", "idempotent", "transactional")
BASELINE = "acks_all"
"""Overheads are measured against acks=all without idempotence: the course's durability, no EOS."""
MIN_COMMITS = 20
"""A transactional slice lasts at least this many commit intervals: with 1 or 2 commits in a slice, the
commit's cost is a matter of where the slice happened to end."""
PEERS = ("none", "baseline", "eos", "all")
"""Which modes Kafka's own ProducerPerformance measures beside the harness (one JVM each): none; the
baseline; the baseline, idempotence and transactions at the published anchor's 100 ms (``eos``); or
every mode that has a Java equivalent."""
EOS_PEERS = ("acks_all", "idempotent", "txn_100ms")


class WorkloadError(DataError):
    """A workload or matrix that cannot be run as given."""


@dataclass(frozen=True)
class Workload:
    """One producer mode with its batching, and the fixed load its latency is measured at.

    Throughput is measured at saturation in time slices (the matrix's rounds); latency at a
    FIXED offered load, ``rate`` records/s for ``duration_s`` (at saturation latency only
    measures the queue in front of the broker).
    """

    mode: str
    commit_ms: int | None = None  # transactional: commit every T ms (Java's --transaction-duration-ms)
    commit_every: int | None = None  # transactional: or every N records (librdkafka side only)
    record_size: int = 1024
    rate: int = 1000
    duration_s: float = 5.0
    linger_ms: int = 5
    batch_size: int = 65536
    max_in_flight: int = 5  # Java's default; the most idempotence allows (5 batches remembered)
    buffer_kb: int = 2048
    partitions: int = 3

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise WorkloadError(f"Unknown producer mode {self.mode!r}: use one of {', '.join(MODES)}.")
        if self.mode == "transactional" and not (self.commit_ms or self.commit_every):
            raise WorkloadError("A transactional workload needs commit_ms or commit_every: say how often it commits.")
        if self.record_size < 16:
            raise WorkloadError(f"record_size={self.record_size} is too small: records carry 16 bytes of header.")
        if self.buffer_kb * 1024 < 4 * self.batch_size:
            raise WorkloadError(f"buffer_kb={self.buffer_kb} holds fewer than 4 batches of {self.batch_size} bytes.")

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
                # The local queue, bounded like Java's buffer.memory (the same figure): librdkafka's default
                # (1 GB) lets produce() run seconds ahead of the broker, and a commit flushes the whole queue.
                "queue.buffering.max.kbytes": self.buffer_kb,
                "queue.buffering.max.messages": 1_000_000,  # the byte bound above is the one that binds
            }
        )
        return conf

    def java_props(self) -> list[str]:
        """``--producer-props`` for ProducerPerformance (values as Java reads them)."""
        conf: dict[str, Any] = {**self.common_conf(), "buffer.memory": self.buffer_kb * 1024}
        return [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in conf.items()]

    def slice_s(self, seconds: float, min_commits: int = MIN_COMMITS) -> float:
        """How long this mode is measured in one round: ``seconds``, or longer for ``min_commits`` commits."""
        if self.transactional and self.commit_ms:
            return max(seconds, min_commits * self.commit_ms / 1000)
        return seconds

    def record(self) -> dict[str, Any]:
        """One row of ``params.parquet`` (the matrix adds ``rounds`` and ``slice_s``)."""
        row = asdict(self)
        row.update(label=self.label, acks=self.acks, idempotent=self.idempotent, transactional=self.transactional)
        return row


@dataclass(frozen=True)
class Matrix:
    """The modes of a run and how long each is measured: ``rounds`` × (every mode for its slice)."""

    name: str
    workloads: tuple[Workload, ...]
    rounds: int = 5
    seconds: float = 3.0
    java_peer: str = "baseline"
    java_seconds: float = 10.0  # the Java tool's measured stretch, after its own warm-up (see bench._peer)
    min_commits: int = MIN_COMMITS
    notes: tuple[str, ...] = field(default_factory=tuple)
    warmup_max_s: float = 0.0  # the brokers' warm-up before the rounds, at most this long (0: none; bench._warmup)

    def __post_init__(self) -> None:
        if self.rounds < 1 or self.seconds <= 0:
            raise WorkloadError(f"rounds={self.rounds}, seconds={self.seconds}: a run needs ≥ 1 round of > 0 s.")
        if self.java_peer not in PEERS:
            raise WorkloadError(f"java_peer={self.java_peer!r}: use one of {', '.join(PEERS)}.")
        if not any(w.mode == BASELINE for w in self.workloads):
            raise WorkloadError(f"Matrix {self.name!r} has no {BASELINE} workload: overheads need the baseline.")

    def slice_s(self, w: Workload) -> float:
        return w.slice_s(self.seconds, self.min_commits)

    @property
    def round_s(self) -> float:
        """Wall time of one round's measured slices (warm-ups and drains come on top)."""
        return sum(self.slice_s(w) for w in self.workloads)

    def peer_workloads(self) -> list[Workload]:
        """The workloads the Java tool measures (it has no commit-every-N-records mode)."""
        if self.java_peer == "none":
            return []
        ok = [w for w in self.workloads if not (w.transactional and not w.commit_ms)]
        if self.java_peer == "baseline":
            return [w for w in ok if w.label == BASELINE]
        return [w for w in ok if w.label in EOS_PEERS] if self.java_peer == "eos" else ok


def _modes(**kw: Any) -> tuple[Workload, ...]:
    commit_intervals = kw.pop("commit_intervals")
    base = [Workload("acks1", **kw), Workload("acks_all", **kw), Workload("idempotent", **kw)]
    base += [Workload("transactional", commit_ms=ms, **kw) for ms in commit_intervals]
    return tuple(base)


MATRICES: dict[str, Matrix] = {
    # A learner's run, ≤ 3 min on a quiet 2-core laptop with Spark's report (eoslab.bench.targets.DEFAULT_RUN_S):
    # 4 rounds of (5 modes × 1.5 s + txn_500ms × 10 s), the Java peer for acks_all, idempotent and txn_100ms,
    # and 2 s at 1000 records/s per mode for latency, after one warm-up round on warm brokers: 147 s estimated
    # (157 s measured with the report; a new cluster's brokers add up to warmup_max_s).
    "default": Matrix(
        "default",
        _modes(rate=1000, duration_s=2.0, commit_intervals=(20, 100, 500)),
        rounds=4,
        seconds=1.5,
        java_peer="eos",
        java_seconds=6.0,
        warmup_max_s=120.0,  # a new cluster's brokers need ~90 s of load here (bench._warmup); a warm one, 1 round
    ),
    # The test suite's matrix, shared by notebook 06, its solution and lab 06: seconds, no Java peer.
    "quick": Matrix(
        "quick",
        _modes(rate=500, duration_s=2.0, commit_intervals=(20, 50)),
        rounds=3,
        seconds=1.0,
        java_peer="none",
        warmup_max_s=6.0,  # one or two rounds: the test suite's budget, and the worst of a cold start absorbed
    ),
}


def matrix(name: str, **overrides: Any) -> Matrix:
    """A named matrix; ``rounds``, ``seconds``, ``java_peer``, ``java_seconds``, ``warmup_max_s`` replace the
    matrix's own, any other keyword replaces that field of every workload (``record_size=``, ``rate=``...)."""
    if name not in MATRICES:
        raise WorkloadError(f"Unknown matrix {name!r}: use one of {', '.join(MATRICES)}.")
    m = MATRICES[name]
    own_keys = ("rounds", "seconds", "java_peer", "java_seconds", "warmup_max_s")
    own = {k: overrides.pop(k) for k in own_keys if k in overrides}
    if overrides:
        m = replace(m, workloads=tuple(replace(w, **overrides) for w in m.workloads))
    return replace(m, **own) if own else m
