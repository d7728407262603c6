"""The course as learners and instructors meet it: JupyterLab, the machine check, the classroom kit.

``lab_argv`` is the command line of `make lab` (the repository root served, the index opened);
``doctor`` checks a machine before a lesson; ``pack`` writes the offline workshop bundle.
"""

from eoslab.course._doctor import Check, Report, doctor
from eoslab.course._lab import INDEX, course_root, lab_argv
from eoslab.course._workshop import LEARNER_EXCLUDES, PackResult, course_files, load_docker_images, pack

__all__ = [
    "Check",
    "INDEX",
    "LEARNER_EXCLUDES",
    "PackResult",
    "Report",
    "course_files",
    "course_root",
    "doctor",
    "lab_argv",
    "load_docker_images",
    "pack",
]
