"""Graded labs: checks that judge behaviour on the live cluster, and the reports built from them.

Lab notebooks call check functions (one per task, in the module of their lab);
``eoslab grade`` runs a lab under nbval and scores it; ``eoslab submit`` packs a
learner's hand-in into one archive; ``eoslab grade --class`` reruns a class's
notebooks (in parallel, resumably) into a gradebook; ``load_class`` pools the class's module-06 runs in
Spark, each learner's machine named (the instructor's class notebook); ``eoslab labs`` generates
labs/ from solutions/.
"""

from eoslab.grading._autograding import classroom_outputs
from eoslab.grading._checks import CheckFailed, Verdict, guarded, verdict
from eoslab.grading._classbook import ClassGrades, grade_class
from eoslab.grading._classruns import ClassHandIn, ClassRuns, class_hand_ins, load_class
from eoslab.grading._gradebook import NOTEBOOK_LIMIT, collect, summary, write_gradebook
from eoslab.grading._labgen import generate_labs, lab_from_solution, strip_solution
from eoslab.grading._report import CELL_TIMEOUT, Report, TaskResult, grade_notebook, graded_cells, score
from eoslab.grading._submission import Archive, Submission, unpack_submission, write_submission

__all__ = [
    "Archive",
    "CELL_TIMEOUT",
    "CheckFailed",
    "ClassGrades",
    "ClassHandIn",
    "ClassRuns",
    "NOTEBOOK_LIMIT",
    "Report",
    "Submission",
    "TaskResult",
    "Verdict",
    "class_hand_ins",
    "classroom_outputs",
    "collect",
    "generate_labs",
    "grade_class",
    "grade_notebook",
    "graded_cells",
    "guarded",
    "lab_from_solution",
    "load_class",
    "score",
    "strip_solution",
    "summary",
    "unpack_submission",
    "verdict",
    "write_gradebook",
    "write_submission",
]
