"""What a lab's check calls, and what guards it.

A graded check cell calls a check of its lab (``eoslab.mNN_*.lab``, or ``eoslab.grading.labNN`` for a module
not yet in a package of its own), which builds on these: the verdict it records and raises (``verdict``,
``CheckFailed``), the guard that answers at once for an answer still the lab's TODO or one that calls the kit's own
answer (``guarded``), and the run of a whole lab notebook under nbval into a score report (``grade_notebook``,
``Report``). ``scan`` reads a learner's
cells as code, never running them: the forbidden-call guard here and the class rerun's tampering check
(``eoslab.classroom``) share it.
"""

from eoslab.labcheck._checks import CheckFailed, Verdict, guarded, verdict
from eoslab.labcheck._report import (
    CELL_TIMEOUT,
    Report,
    TaskResult,
    grade_notebook,
    graded_cells,
    score,
    stop_nbval_runs,
)

__all__ = [
    "CELL_TIMEOUT",
    "CheckFailed",
    "Report",
    "TaskResult",
    "Verdict",
    "grade_notebook",
    "graded_cells",
    "guarded",
    "score",
    "stop_nbval_runs",
    "verdict",
]
