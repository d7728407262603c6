"""Benchmarks: commands that print figures, each beside its peer or target from the same run.

- the course's measurements: :mod:`eoslab.bench.producers` (what idempotence and transactions cost,
  written as runs for module 06; the format is :mod:`eoslab.runs`; a failed phase raises its
  ``BenchError``), :mod:`eoslab.bench.audit`
  (a topic with known anomalies for module 06's Spark audit);
- the kit's own benchmarks: :mod:`tools.kitbench` (cluster start-up and recovery, the fault proxy);
- every target, with its reason: :mod:`eoslab.bench.targets`.
"""

__all__: list[str] = []  # light on purpose: `eoslab.bench.targets` is read by the CLI and by analysis
