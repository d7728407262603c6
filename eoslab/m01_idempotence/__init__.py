"""Course module 01, the idempotent producer: a producer id, an epoch and sequence numbers, so a resent batch is
written once.

Its lesson code is :mod:`eoslab.m01_idempotence.lesson` (the notebook imports it as ``demo``) and
:mod:`eoslab.m01_idempotence.producer_state` (how a restarted broker gets its producer state back); lab 01's checks
are :mod:`eoslab.m01_idempotence.lab` (the lab imports it as ``lab01``), with their pure cases in the private room
``_lab_cases``. The module's other files:

- notebook: ``notebooks/01_idempotent_producer.ipynb``
- lab: ``labs/lab01_idempotence.ipynb`` (generated from the solution by ``eoslab labs``)
- solution: ``solutions/lab01_idempotence.ipynb``
- docs: ``docs/instructor.md`` (its section "01 · Idempotent producer → lab 01")
- tests: ``tests/unit/m01/``, ``tests/integration/m01/``, and lab 01's wrong answers in
  ``tests/integration/wrong_answers/lab01.py``
"""

__all__: list[str] = []
