"""The kit's own benchmarks, a developer package outside the learner's ``eoslab``: how fast the teaching cluster
starts and recovers, what it costs in memory (:mod:`tools.kitbench.cluster`, :mod:`tools.kitbench.startup`), what
the fault proxy costs (:mod:`tools.kitbench.proxy`), what the harness and Kafka's tool really send
(:mod:`tools.kitbench.wire`), librdkafka's idempotent spin (:mod:`tools.kitbench.spin`), how long module 06's
analysis takes over a class (:mod:`tools.kitbench.analyse`) and how fast a class is graded on clusters of their
own (:mod:`tools.kitbench.grading`); their targets: :mod:`tools.kitbench.targets`. Run from the course's root:
``.venv/bin/python -m tools.kitbench WHAT`` (:mod:`tools.kitbench.cli`). They measure the kit, not Kafka's
exactly-once: the course's measurements stay in :mod:`eoslab.bench` (``eoslab bench producers|faults``)."""
