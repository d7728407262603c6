"""Course module 02, producer-id ranges: where producer ids come from, so that no two producers share one.

Its lesson code is :mod:`eoslab.m02_pid_ranges.lesson` (the notebook imports it as ``pids``), the kit's own raw
requests are its private room ``_pid_client``, and lab 02's checks are :mod:`eoslab.m02_pid_ranges.lab` (the lab
imports it as ``lab02``). The module's other files:

- notebook: ``notebooks/02_pid_ranges.ipynb``
- lab: ``labs/lab02_pid_ranges.ipynb`` (generated from the solution by ``eoslab labs``)
- solution: ``solutions/lab02_pid_ranges.ipynb``
- docs: ``docs/instructor.md`` (its section "02 · PID ranges → lab 02")
- tests: ``tests/unit/m02/``, ``tests/integration/m02/``, and lab 02's wrong answers in
  ``tests/integration/wrong_answers/lab02.py``
"""

__all__: list[str] = []
