"""The flows of the course modules, shared by notebooks, labs and checks.

Most flows are modules (``eoslab.demos.idempotent``, ``eoslab.demos.pid_ranges``) or packages
(``eoslab.demos.transactions``, ``eoslab.demos.read_committed``, ``eoslab.demos.pipeline``); module 05's
fault matrix cell runner is also exported here, since grading and bench both call it.
"""

from eoslab.demos.pipeline import FAULTS, KINDS, CellResult, run_cell

__all__ = ["CellResult", "FAULTS", "KINDS", "run_cell"]
