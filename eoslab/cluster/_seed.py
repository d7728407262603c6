"""The seed arrangement: the course's demo topic, laid out as the diagrams draw it.

``demo`` has 2 partitions: partition 0 ("A") led by broker 1 and partition 1
("B") led by broker 2. Leadership is not left to chance: an explicit replica
assignment makes those brokers the PREFERRED leaders (the first replica of each
list), and `heal` runs a preferred-leader election to bring them back.
"""

from __future__ import annotations

from confluent_kafka import KafkaException

from eoslab._timeouts import SEED
from eoslab._wait import wait_until
from eoslab.cluster._admin import Admin, partition_views
from eoslab.errors import ClusterError, EoslabError
from eoslab.topology import DEMO_PARTITION_LEADERS, DEMO_TOPIC


def seed_assignment(broker_ids: list[int]) -> list[list[int]]:
    """Replica lists whose first entry (the preferred leader) is the course's leader."""
    out = []
    for _, leader in sorted(DEMO_PARTITION_LEADERS.items()):
        rest = [b for b in broker_ids if b != leader]
        # Followers in ring order after the leader: [1,2,3] and [2,3,1].
        rest.sort(key=lambda b: (b - leader) % (max(broker_ids) + 1))
        out.append([leader, *rest])
    return out


def ensure_seed(admin: Admin, timeout: float = SEED, check: bool = True) -> None:
    """Create the demo topic if it is missing, then (``check``) verify the arrangement holds."""
    brokers = [b.node_id for b in admin.topology.brokers]
    want = seed_assignment(brokers)
    created = DEMO_TOPIC not in admin.topics()
    if created:
        try:
            admin.create_topic(
                DEMO_TOPIC,
                replica_assignment=want,
                config={"min.insync.replicas": "2"},  # explicit, though the broker default says the same
            )
        except KafkaException as exc:
            if "TOPIC_ALREADY_EXISTS" not in str(exc):
                raise
    if check or created:
        check_seed(admin, timeout)


def check_seed(admin: Admin, timeout: float = SEED) -> None:
    """Raise unless demo-0 is led by broker 1 and demo-1 by broker 2, with RF 3."""
    want = seed_assignment([b.node_id for b in admin.topology.brokers])

    def probe() -> bool:
        parts = admin.partitions(DEMO_TOPIC)
        if [list(p.replicas) for p in parts] != want:
            return False
        # Every live broker must already say so, not just the one the AdminClient asked.
        views = partition_views(admin.topology, DEMO_TOPIC)
        return bool(views) and all(view == DEMO_PARTITION_LEADERS for view in views.values())

    try:
        wait_until(probe, timeout=timeout, what=f"the seed arrangement of {DEMO_TOPIC!r}")
    except EoslabError:
        parts = admin.partitions(DEMO_TOPIC)
        seen = ", ".join(f"partition {p.partition}: leader {p.leader}, replicas {list(p.replicas)}" for p in parts)
        raise ClusterError(
            f"Topic {DEMO_TOPIC!r} is not arranged as the course needs ({seen}; want leaders "
            f"{DEMO_PARTITION_LEADERS} and replicas {want}): run `eoslab heal`, or delete the topic "
            "and run `eoslab up` to recreate it."
        ) from None
