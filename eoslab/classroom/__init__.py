"""The class's machinery: hand-ins, the class rerun, its gradebook and what it hands to other tools.

``eoslab submit`` packs a learner's hand-in into one archive (``write_submission``); ``eoslab grade --class``
reruns a class's notebooks (in parallel, resumably, the course's own check cells restored) into a gradebook
(``grade_class``), with the LMS's CSV and a feedback file per learner; ``eoslab grade --classroom`` writes the
GitHub Classroom results of a learner's workflow (``classroom_outputs``); ``load_class`` pools the class's
module-06 runs in Spark, each learner's machine named (the instructor's class notebook); ``eoslab labs``
generates labs/ from solutions/ (``generate_labs``). It sits above the labs' checks, since it reruns every lab.
"""

from eoslab.classroom._class_grades import ClassGrades, grade_class
from eoslab.classroom._class_runs import ClassHandIn, ClassRuns, class_hand_ins, load_class
from eoslab.classroom._github_classroom import classroom_outputs
from eoslab.classroom._gradebook import NOTEBOOK_LIMIT, collect, summary, write_gradebook
from eoslab.classroom._labgen import generate_labs, lab_from_solution, strip_solution
from eoslab.classroom._submission import Archive, Submission, unpack_submission, write_submission

__all__ = [
    "Archive",
    "ClassGrades",
    "ClassHandIn",
    "ClassRuns",
    "NOTEBOOK_LIMIT",
    "Submission",
    "class_hand_ins",
    "classroom_outputs",
    "collect",
    "generate_labs",
    "grade_class",
    "lab_from_solution",
    "load_class",
    "strip_solution",
    "summary",
    "unpack_submission",
    "write_gradebook",
    "write_submission",
]
