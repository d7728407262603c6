"""librdkafka's log lines, routed through Python ``logging``: every logger and its level, set here once.

librdkafka logs to stderr unless a client gets a ``logger``; in a notebook that is
red text for every retry. Each kind of client gets its own child logger of
``eoslab.librdkafka``, so a level set for one never depends on which module was
imported first, and a learner can turn one up without the others::

    logging.getLogger("eoslab.librdkafka").setLevel(logging.INFO)   # the lessons' clients
"""

from __future__ import annotations

import logging

LESSONS = logging.getLogger("eoslab.librdkafka")
"""Clients of lessons, labs and benchmarks: warnings show (a retry, a fenced producer)."""
LESSONS.setLevel(logging.WARNING)

KIT = logging.getLogger("eoslab.librdkafka.kit")
"""The kit's own clients (admin, readiness probes, the CDS warm-up): they meet brokers killed on
purpose, and librdkafka logs every refused connection at ERROR; that is noise, not news."""
KIT.setLevel(logging.CRITICAL)

EXPERIMENTS = logging.getLogger("eoslab.librdkafka.experiments")
"""Clients of an experiment whose refusal IS the result (KIP-447's commit with stale group metadata): the broker's
answer is read from the trace and shown in the experiment's table, so librdkafka's TXNERR for it is not news."""
EXPERIMENTS.setLevel(logging.CRITICAL)

BENCH = logging.getLogger("eoslab.librdkafka.bench")
"""Benchmark clients: errors show; warnings such as "Coordinator load in progress: retrying" are not figures."""
BENCH.setLevel(logging.ERROR)
