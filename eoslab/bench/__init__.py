"""Benchmarks: commands that print figures, each beside its peer or target from the same run.

- the course's measurements: :mod:`eoslab.bench.producers` (what idempotence and transactions cost,
  written as runs for module 06; the format is :mod:`eoslab.runs`; a failed phase raises its
  ``BenchError``), :mod:`eoslab.bench.audit`
  (a topic with known anomalies for module 06's Spark audit);
- the course's targets, with their reasons: :mod:`eoslab.bench.targets`.

The kit's own benchmarks (cluster start-up and recovery, the fault proxy, the wire, librdkafka's spin, the
analysis's and the class rerun's times) are the developer package ``tools/kitbench/``, outside this package.
"""

__all__: list[str] = []  # light on purpose: `eoslab.bench.targets` is read by the CLI
