"""Every target a benchmark of the kit itself prints its figure against: one place, each with where it comes from.

A target is a promise about the kit on a 2-core laptop. A figure is printed beside its target and the ratio,
measured in the same run, and ``OVER TARGET`` when it misses; no test asserts one, because the machines these
run on are shared and noisy. Final figures: docs/benchmarks.md. The course's own targets (the learner's run)
stay in ``eoslab.bench.targets``.
"""

from __future__ import annotations

# `python -m tools.kitbench cluster`: what a learner waits for, and what the cluster leaves of 8 GB.
COLD_START_S = 20.0
"""Six JVMs from nothing to ready (quorum, unfenced brokers, internal topics, seed): `make lab`'s wait."""
BROKER_RESTART_S = 8.0
"""A killed broker started again until every ISR is complete: a lesson's kill-and-restart cell stays short."""
CLUSTER_RSS_MB = 3072.0
"""All six JVMs resident: the README's "about 3 GB of free memory" on an 8 GB laptop."""

# `python -m tools.kitbench proxy`: every lesson's client goes through the proxy; it must not be what is
# measured.
PROXY_THROUGHPUT_RATIO = 0.8
"""Throughput through the proxy over direct (medians of alternating rounds, acks=all, idempotent)."""
PROXY_ADDED_P99_MS = 2.0
"""p99 ack latency through the proxy minus direct: small beside the few ms an acks=all write takes."""
PROXY_ROUND_S = 6.0
"""Not a target: the length of one measured throughput round (5 per path, alternating), long enough to
reach a steady rate; the command's default for ``--seconds``."""

# `python -m tools.kitbench analyse`: module 06's whole analysis over a class-sized set of runs.
ANALYSIS_RUNS = 100
"""A class of 40-50 learners with two runs each."""
ANALYSIS_S = 30.0
"""Every figure of notebook 06 over ANALYSIS_RUNS runs on 2 cores: an instructor's wait."""

# `python -m tools.kitbench grading`: an instructor grades a class by the rerun of every notebook.
GRADING_WORKERS_RATIO = 1.5
"""Two workers, each on a cluster of its own, over one worker: the class's wall time (on
one shared cluster two workers gave 1.05x, docs/instructor.md)."""
CLASS_LEARNERS = 30
"""Not a target: the class the estimate below is for, each learner handing in the six labs."""
CLASS_GRADING_MIN = 60.0
"""A class of CLASS_LEARNERS graded within an hour on an instructor's machine: the estimate from the
measured notebooks per hour, printed against it."""
