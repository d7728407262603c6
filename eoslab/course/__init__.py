"""The course as learners and instructors meet it: JupyterLab, the machine check, the classroom kit, its time.

``lab_argv`` is the command line of `make lab` (the repository root served, the index opened);
``doctor`` checks a machine before a lesson; ``pack`` writes the offline workshop bundle;
``course_time`` says how long each module takes, from its words and its cells' measured run times
(``measure_times`` runs the notebooks; ``write_time_lines`` states the result in the notebooks).
"""

from eoslab.course._doctor import Check, Report, doctor
from eoslab.course._lab import HIDE_GLOBS, INDEX, course_root, lab_argv, lab_env, lab_port
from eoslab.course._measure import NOTEBOOK_LIMIT, Measured, measure_times, to_measure
from eoslab.course._time_lines import write_time_lines
from eoslab.course._time_table import time_table
from eoslab.course._timing import (
    LAB_MINUTES_PER_TASK,
    READING_WPM,
    TIMES_FILE,
    WORKSHOP_MINUTES,
    CourseTime,
    ModuleTime,
    course_time,
)
from eoslab.course._workshop import (
    LEARNER_EXCLUDES,
    PackResult,
    build_wheels,
    bundle_jars,
    course_files,
    load_docker_images,
    pack,
    pinned_requirements,
)

__all__ = [
    "Check",
    "CourseTime",
    "HIDE_GLOBS",
    "INDEX",
    "LAB_MINUTES_PER_TASK",
    "LEARNER_EXCLUDES",
    "Measured",
    "ModuleTime",
    "NOTEBOOK_LIMIT",
    "PackResult",
    "READING_WPM",
    "Report",
    "TIMES_FILE",
    "WORKSHOP_MINUTES",
    "build_wheels",
    "bundle_jars",
    "course_files",
    "course_root",
    "course_time",
    "doctor",
    "lab_argv",
    "lab_env",
    "lab_port",
    "load_docker_images",
    "measure_times",
    "pack",
    "pinned_requirements",
    "time_table",
    "to_measure",
    "write_time_lines",
]
