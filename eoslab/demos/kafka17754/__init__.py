"""KAFKA-17754 on the learner's cluster: a request of transaction N that arrives during transaction N+1.

Three experiments, each judged by the history checker: :func:`delayed_endtxn` and :func:`delayed_produce`
with librdkafka (the original transaction protocol), :func:`delayed_endtxn_java` with the Java 4.4 client
(transaction version 2, KIP-890). :func:`plot` draws an experiment's requests, the late copy named.
:func:`stale_marker`: KIP-1228 (4.2), a late copy of a TV2 transaction's marker refused at the partition leader.
"""

from eoslab.demos.kafka17754._java import JAVA_TRANSACTIONS, delayed_endtxn_java
from eoslab.demos.kafka17754._librdkafka import (
    LATE_CLIENT,
    TXN_TIMEOUT_MS,
    Experiment,
    delayed_endtxn,
    delayed_produce,
    send_late_endtxn,
)
from eoslab.demos.kafka17754._marker import StaleMarker, stale_marker
from eoslab.demos.kafka17754._plot import plot, window

__all__ = [
    "Experiment",
    "JAVA_TRANSACTIONS",
    "LATE_CLIENT",
    "StaleMarker",
    "TXN_TIMEOUT_MS",
    "delayed_endtxn",
    "delayed_endtxn_java",
    "delayed_produce",
    "plot",
    "send_late_endtxn",
    "stale_marker",
    "window",
]
