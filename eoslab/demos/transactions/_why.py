"""Module 03's opening anomaly: one unit of work written to two partitions without a transaction, cut by a crash.

An idempotent producer (``enable.idempotence=true``, no ``transactional.id``) writes the first half
of a transfer to partition A; its process ends before the second half goes to B, so every consumer
sees half a transfer. The restarted application, which cannot know how far its predecessor got,
does the whole transfer again under a new producer id, so A holds the first half twice. Idempotence
is on throughout and helps with neither: what the module's transactions are for.

The application runs in a process of its own (:class:`eoslab.faults.ZombieProducer`), so that its
end is a real end of a process, not a producer object the notebook forgets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from eoslab.demos._clients import read_values
from eoslab.errors import ClientError
from eoslab.faults import ZombieProducer

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

Read = list[tuple[int, int, str]]
"""(partition, offset, value) of every record a read_committed consumer returned."""


@dataclass(frozen=True)
class CutWrite:
    """Partitions A (0) and B (1) read after the crash and after the restart redid the unit of work."""

    first: str
    second: str
    after_crash: Read
    after_restart: Read

    def count(self, read: Read, partition: int, value: str) -> int:
        return sum(1 for p, _, v in read if p == partition and v == value)

    def frame(self) -> pd.DataFrame:
        """What a consumer of A and of B returns at each moment."""
        import pandas as pd

        return pd.DataFrame(
            [
                {"moment": moment, "partition": name, "values": [v for p, _, v in read if p == part]}
                for moment, read in (("after the crash", self.after_crash), ("after the restart", self.after_restart))
                for part, name in ((0, "A"), (1, "B"))
            ]
        )

    def sentence(self) -> str:
        """What this run showed, in words true on any run: the torn unit and the redone one, each only if seen."""
        a, b = self.count(self.after_crash, 0, self.first), self.count(self.after_crash, 1, self.second)
        if a and not b:
            torn = "This run showed it: after the crash, A held the first half and B nothing, half a unit of work."
        else:
            torn = (
                f"This run did not cut the unit: after the crash, A held the first half {_times(a)}, "
                f"B the second {_times(b)}."
            )
        a2, b2 = self.count(self.after_restart, 0, self.first), self.count(self.after_restart, 1, self.second)
        redone = f" After the restart redid it, A holds the first half {_times(a2)} and B the second {_times(b2)}"
        if a2 >= 2:
            return f"{torn}{redone}: a duplicate, written under a new producer id, that idempotence cannot recognise."
        return f"{torn}{redone}: no duplicate."


def _times(n: int) -> str:
    return {0: "0 times", 1: "once"}.get(n, f"{n} times")


def _run(app: ZombieProducer, *commands: dict[str, Any]) -> None:
    for cmd in commands:
        answer = app.call(**cmd)
        if not answer.get("ok"):
            raise ClientError(f"The application's {cmd['op']} failed ({answer}); check that the cluster is up.")


def crash_between_writes(cluster: Cluster, topic: str, settings: dict[str, Any], first: str, second: str) -> CutWrite:
    """Write ``first`` to A and end the application before ``second`` goes to B; restart it and write both.

    ``settings`` are the application's producer settings, as the notebook shows them; ``topic`` has
    partitions A (0) and B (1). Each read is a read_committed consumer's, from the start.
    """
    name = f"app-{topic}"
    with ZombieProducer(settings, name=name) as app:
        _run(app, {"op": "produce", "topic": topic, "partition": 0, "value": first}, {"op": "flush"})
    # The process is gone here: its write to B never happens.
    after_crash = read_values(cluster, topic, [0, 1])
    with ZombieProducer(settings, name=f"{name}-restarted") as app:
        _run(
            app,
            {"op": "produce", "topic": topic, "partition": 0, "value": first},
            {"op": "produce", "topic": topic, "partition": 1, "value": second},
            {"op": "flush"},
        )
    return CutWrite(first, second, after_crash, read_values(cluster, topic, [0, 1]))
