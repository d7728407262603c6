"""The flows of module 03 (transactions), shared by the notebook, its lab and the checks.

General on purpose: every function takes the topic, partitions and transactional ids it works on. The lesson
clients named here too (the transactional producer, the consumer, the reads, the run ids) are ``eoslab.demos``'s,
which modules 04 and 05 import from there, never from this package::

    from eoslab.m03_transactions import lesson as txn
    lesson = txn.TransactionLesson(cluster)          # ids, topics and coordinators of one run
    lesson.arrange_coordinators()                     # broker 3 coordinates the id, broker 1 the group
    with lesson.step("init") as s:
        p = lesson.producer("producer-1"); p.init_transactions(30)
    s.show()                                          # the trace, __transaction_state, the disk
"""

from eoslab.demos import (
    JAVA_PRODUCER,
    READ_COMMITTED,
    TXN_PRODUCER,
    TxnProducer,
    committed_offsets,
    consumer,
    coordinator_state,
    read_values,
    run_id,
    seed_input,
    transactional_producer,
    wait_settled,
)
from eoslab.m03_transactions._arrange import (
    INTERNAL_TOPIC,
    Moved,
    leader_views,
    make_coordinator,
    make_leader,
    wait_coordinator,
)
from eoslab.m03_transactions._lesson import TransactionLesson
from eoslab.m03_transactions._protocols import PLAN, TwoClients, java_producer, two_protocols
from eoslab.m03_transactions._scenarios import (
    Failover,
    Fenced,
    Hung,
    attempt,
    coordinator_failover,
    fence_zombie,
    hung_transaction,
    kafka_error,
)
from eoslab.m03_transactions._step import Step, producer_ids
from eoslab.m03_transactions._timeline import (
    LANES,
    marker_delays,
    plot_marker_delays,
    plot_timeline,
    states_diagram,
    timed_transaction,
)

__all__ = [
    "Failover",
    "Fenced",
    "Hung",
    "INTERNAL_TOPIC",
    "JAVA_PRODUCER",
    "LANES",
    "Moved",
    "PLAN",
    "READ_COMMITTED",
    "Step",
    "TXN_PRODUCER",
    "TransactionLesson",
    "TwoClients",
    "TxnProducer",
    "attempt",
    "committed_offsets",
    "consumer",
    "coordinator_failover",
    "coordinator_state",
    "fence_zombie",
    "hung_transaction",
    "java_producer",
    "kafka_error",
    "leader_views",
    "make_coordinator",
    "make_leader",
    "marker_delays",
    "plot_marker_delays",
    "plot_timeline",
    "producer_ids",
    "read_values",
    "run_id",
    "seed_input",
    "states_diagram",
    "timed_transaction",
    "transactional_producer",
    "two_protocols",
    "wait_coordinator",
    "wait_settled",
]
