"""Course module 03, transactions: writes to several partitions and a group's offsets that commit or abort as one.

Its lesson code is :mod:`eoslab.m03_transactions.lesson` (the notebook imports it as ``txn``): one run's ids, topics
and coordinators, each step's trace, state and disk, the failure scenarios, the two protocols and the timelines, in
the private rooms ``_lesson``, ``_arrange``, ``_step``, ``_scenarios``, ``_protocols`` and ``_timeline``. Lab 03's
checks are :mod:`eoslab.m03_transactions.lab` (the lab imports it as ``lab03``), with what they set up on the
cluster in the private room ``_lab_setup``. The module's other files:

- notebook: ``notebooks/03_transactions.ipynb``
- lab: ``labs/lab03_transactions.ipynb`` (generated from the solution by ``eoslab labs``)
- solution: ``solutions/lab03_transactions.ipynb``
- docs: ``docs/instructor.md`` (its section "03 · Transactions → lab 03"), ``docs/transactions.md``
- tests: ``tests/unit/m03/``, ``tests/integration/m03/``, and lab 03's wrong answers in
  ``tests/integration/wrong_answers/lab03.py``
"""

__all__: list[str] = []
