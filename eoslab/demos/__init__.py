"""The flows of the course modules, shared by notebooks, labs and checks.

Most flows are packages (``eoslab.demos.read_committed``, ``eoslab.demos.pipeline``); modules 01, 02, 03 and 07
have packages of their own (``eoslab.m01_idempotence``, ``eoslab.m02_pid_ranges``, ``eoslab.m03_transactions``,
``eoslab.m07_production``). Exported here: the lesson clients (``eoslab.demos._clients``:
producers, one record's send, consumers, reads, raw Produce requests, run ids, one home for every module, so no
module imports another's). Module 05's fault matrix (``eoslab.demos.pipeline``) is imported from its own package,
so a kernel that never runs it never loads it.
"""

from eoslab.demos._clients import (
    JAVA_PRODUCER,
    PRODUCE_VERSION,
    READ_COMMITTED,
    TXN_PRODUCER,
    UNSETTLED,
    Delivery,
    TxnProducer,
    batches,
    committed_offsets,
    consumer,
    coordinator_state,
    produce_raw,
    produce_request,
    producer,
    read_values,
    run_id,
    seed_input,
    send,
    transactional_producer,
    wait_settled,
)

__all__ = [
    "Delivery",
    "JAVA_PRODUCER",
    "PRODUCE_VERSION",
    "READ_COMMITTED",
    "TXN_PRODUCER",
    "TxnProducer",
    "UNSETTLED",
    "batches",
    "committed_offsets",
    "consumer",
    "coordinator_state",
    "produce_raw",
    "produce_request",
    "producer",
    "read_values",
    "run_id",
    "seed_input",
    "send",
    "transactional_producer",
    "wait_settled",
]
