"""Course module 07, exactly-once in production: the mistakes practitioners make, run on the cluster and judged.

Its lesson code is :mod:`eoslab.m07_production.lesson` (a learner's program run as recorded processes under a
scenario; the mistakes and their fixed program), in the private rooms ``_cases``, ``_run``, ``_recorder``,
``_expiry`` and ``_child``, with the child process's stable name :mod:`eoslab.m07_production.child`
(``python -m eoslab.m07_production.child``); lab 07's checks are :mod:`eoslab.m07_production.lab` (the lab imports it
as ``lab07``). The module's other files:

- notebook: ``notebooks/07_in_production.ipynb``
- lab: ``labs/lab07_diagnosis.ipynb`` (generated from the solution by ``eoslab labs``)
- solution: ``solutions/lab07_diagnosis.ipynb``
- docs: ``docs/instructor.md`` (its section "07 · Exactly-once in production → lab 07")
- tests: ``tests/unit/m07/``, ``tests/integration/m07/``, and lab 07's wrong answers in
  ``tests/integration/wrong_answers/lab07.py``
"""

__all__: list[str] = []
