"""Graded labs: checks that judge behaviour on the live cluster, and the reports built from them.

Lab notebooks call check functions (one per task, in the module of their lab);
``eoslab grade`` runs a lab under nbval and scores it; ``eoslab grade --class``
makes a class gradebook; ``eoslab labs`` generates labs/ from solutions/.
"""

from eoslab.grading._checks import CheckFailed, Verdict, guarded, verdict
from eoslab.grading._gradebook import NOTEBOOK_LIMIT, collect, summary, write_gradebook
from eoslab.grading._labgen import generate_labs, lab_from_solution, strip_solution
from eoslab.grading._report import CELL_TIMEOUT, Report, TaskResult, grade_notebook, graded_cells, score

__all__ = [
    "CELL_TIMEOUT",
    "CheckFailed",
    "NOTEBOOK_LIMIT",
    "Report",
    "TaskResult",
    "Verdict",
    "collect",
    "generate_labs",
    "grade_notebook",
    "graded_cells",
    "guarded",
    "lab_from_solution",
    "score",
    "strip_solution",
    "summary",
    "verdict",
    "write_gradebook",
]
