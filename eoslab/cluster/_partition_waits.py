"""The cluster's waits on partitions: a new leader, an ISR, every ISR complete (a mixin of ``Cluster``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from eoslab._timeouts import FULL_ISR, ISR, NEW_LEADER, PROBE
from eoslab._wait import wait_until
from eoslab.cluster._admin import PartitionState, serving_report
from eoslab.topology import Topology


class PartitionWaits:
    """Waits that ask Kafka about partitions; :class:`eoslab.cluster.Cluster` provides the questions."""

    topology: Topology

    if TYPE_CHECKING:

        def partitions(self, topic: str | None = None) -> list[PartitionState]: ...
        def partition(self, topic: str, partition: int) -> PartitionState: ...
        def leader(self, topic: str, partition: int) -> int: ...
        def isr(self, topic: str, partition: int) -> tuple[int, ...]: ...
        def _log_tails(self, names: Iterable[str] = ()) -> str: ...

    def wait_for_new_leader(self, topic: str, partition: int, old_leader: int, timeout: float = NEW_LEADER) -> int:
        """Wait until ``topic-partition`` has a live leader other than ``old_leader``; return it."""

        def probe() -> int | None:
            leader = self.leader(topic, partition)
            return leader if leader not in (-1, old_leader) else None

        # A killed leader is noticed when its session expires (broker.session.timeout.ms = 5 s).
        leader = wait_until(probe, timeout=timeout, what=f"a new leader for {topic}-{partition} (old: {old_leader})")
        assert leader is not None
        return leader

    def wait_for_isr(self, topic: str, partition: int, isr: Iterable[int], timeout: float = ISR) -> None:
        want = tuple(sorted(isr))

        def probe() -> bool:
            return tuple(sorted(self.isr(topic, partition))) == want

        wait_until(
            probe,
            timeout=timeout,
            what=f"ISR of {topic}-{partition} to be {list(want)}",
            describe=lambda: f"now: {self.partition(topic, partition)}",
        )

    def wait_full_isr(self, timeout: float = FULL_ISR) -> None:
        """Every partition of every topic has all its replicas in sync."""

        def lagging() -> list[str]:
            return [
                f"{p.topic}-{p.partition} isr={list(p.isr)}"
                for p in self.partitions()
                if sorted(p.isr) != sorted(p.replicas) or p.leader == -1
            ]

        def describe() -> str:
            try:
                return "lagging: " + ", ".join(lagging()[:5])
            except Exception as exc:  # noqa: BLE001 - no metadata at all: which broker answers, its log
                tails = self._log_tails(b.name for b in self.topology.brokers)
                return f"no metadata ({exc}); {serving_report(self.topology.brokers, PROBE)}\n{tails}"

        wait_until(
            lambda: not lagging(), timeout=timeout, what="every partition's ISR to be complete", describe=describe
        )
