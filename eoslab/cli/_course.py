"""``eoslab workshop``, ``eoslab doctor``, ``eoslab course`` and ``eoslab lab``: the course as learners and
instructors meet it.

Each subcommand's parser sits beside its handler; ``PARSERS`` hands them to ``eoslab.cli``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from eoslab.cli._common import Registrar, Subparsers, backend_name, cluster_of


def cmd_workshop(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from eoslab.course import course_root, pack
    from eoslab.topology import KAFKA_IMAGE

    images = list(args.docker_image)
    if not images and backend_name(args) == "docker":
        images = [os.environ.get("EOSLAB_KAFKA_IMAGE") or KAFKA_IMAGE]  # the image the docker backend runs
    result = pack(Path(args.dir), root=course_root(), docker_images=images, wheels=not args.no_wheels)
    print(result.summary())
    return 0


def _workshop_parser(sub: Subparsers) -> None:
    s = sub.add_parser("workshop", help="a classroom kit: `eoslab workshop pack DIR` writes an offline bundle")
    s.add_argument("action", choices=["pack"])
    s.add_argument("dir", metavar="DIR", help="a new folder: DIR/learner (no solutions) and DIR/instructor")
    s.add_argument(
        "--docker-image",
        action="append",
        default=[],
        metavar="NAME",
        help="also `docker save` this image into the bundle (default with the docker backend: its image); repeatable",
    )
    s.add_argument("--no-wheels", action="store_true", help="leave the Python wheels out (laptops have network)")
    s.set_defaults(func=cmd_workshop)


def cmd_doctor(args: argparse.Namespace) -> int:
    from eoslab.course import doctor

    report = doctor()
    print(report)
    return 0 if report.ready else 1


def _doctor_parser(sub: Subparsers) -> None:
    sub.add_parser(
        "doctor", help="is this machine ready? Java, memory, ports, CPUs, disk, jars, Docker, Chromium"
    ).set_defaults(func=cmd_doctor)


def cmd_lab(args: argparse.Namespace) -> int:
    """Replace this process with JupyterLab serving the course (the cluster is `eoslab up`'s job)."""
    import os

    from eoslab._ports import holder, is_free
    from eoslab.course import lab_argv, lab_env, lab_port

    port = lab_port(args.jupyter_args)
    if not is_free(port):
        who, _ = holder(port)
        print(f"Port {port} is held by {who}: JupyterLab takes the next free port; open the address it prints below.")
    argv = lab_argv(None, *args.jupyter_args)
    os.execve(argv[0], argv, lab_env())
    return 0  # not reached


def _lab_parser(sub: Subparsers) -> None:
    s = sub.add_parser(
        "lab",
        help="open the course in JupyterLab (the repository root served, the index opened); "
        "other arguments go to jupyter lab, e.g. --port=8890 --no-browser",
    )
    s.set_defaults(func=cmd_lab)


def _number(text: str, option: str, *, above_zero: bool) -> float | str:
    """The option's number, or the sentence refusing it."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isfinite(value) and (value > 0 if above_zero else value >= 0):
        return value
    return f"{option} {text!r}: give a number {'above 0' if above_zero else 'of 0 or more'}."


def _course_refusal(args: argparse.Namespace, root: Path) -> str | None:
    """Why the arguments cannot be used, in one sentence, before anything runs."""
    if not (root / "notebooks").is_dir():
        return f"{root} holds no notebooks/ folder: run this in the course's folder, or give it with --course DIR."
    if args.labs and not args.measure:
        return "--labs goes with --measure: it also runs each module's solution to measure the lab."
    for name in args.notebooks:
        if not Path(name).is_file() or not name.endswith(".ipynb"):
            return f"{name}: no such notebook; give module notebooks, e.g. notebooks/01_idempotent_producer.ipynb."
    for option, text, above_zero in (
        ("--wpm", args.wpm, True),
        ("--lab-minutes-per-task", args.lab_minutes_per_task, False),
        ("--notebook-limit", args.notebook_limit, True),
        ("--cell-timeout", args.cell_timeout, True),
    ):
        if isinstance(found := _number(text, option, above_zero=above_zero), str):
            return found
    return None


def _measure(args: argparse.Namespace, root: Path, notebooks: list[Path] | None, times: Path) -> int:
    """Run the notebooks on the running cluster and keep their cells' times; 1 if a notebook failed."""
    from eoslab.course import measure_times, to_measure

    if not cluster_of(args).is_up():
        print(
            "eoslab: the cluster is not up, and the course's notebooks run on it: start it with `eoslab up`, "
            "then measure again.",
            file=sys.stderr,
        )
        return 1
    try:
        done = measure_times(
            root,
            to_measure(root, notebooks, labs=args.labs),
            times_file=times,
            cell_timeout=math.ceil(float(args.cell_timeout)),
            notebook_limit=float(args.notebook_limit),
            env={"EOSLAB_BACKEND": args.backend} if args.backend else None,
            backend=backend_name(args),
        )
    except KeyboardInterrupt:
        print(
            f"eoslab: interrupted; every cell measured so far is kept in {times}: name the notebooks still to "
            "measure and run again.",
            file=sys.stderr,
        )
        return 130
    for m in done:
        print(m.times.error or f"measured {m.notebook}: {len(m.times.cells)} cells, {m.times.total_s:.0f} s")
    return 1 if any(m.times.error for m in done) else 0


def cmd_course(args: argparse.Namespace) -> int:
    """``eoslab course time``: each module's core time, measured (with --measure) or read from the times file."""
    from eoslab.course import TIMES_FILE, course_root, course_time, time_table, write_time_lines

    root = Path(args.course) if args.course else course_root()
    if (refused := _course_refusal(args, root)) is not None:
        print(f"eoslab: {refused}", file=sys.stderr)
        return 2
    notebooks = [Path(n) for n in args.notebooks] or None
    times = Path(args.times) if args.times else root / TIMES_FILE
    code = _measure(args, root, notebooks, times) if args.measure else 0
    if code not in (0, 1):
        return code
    course = course_time(
        root, notebooks, times_file=times, wpm=float(args.wpm), lab_minutes_per_task=float(args.lab_minutes_per_task)
    )
    print(json.dumps(course.to_json(), indent=1) if args.json else time_table(course))
    if args.write_notebooks:
        for path in write_time_lines(root, course):
            print(f"wrote {path}", file=sys.stderr if args.json else sys.stdout)
    return code


def _course_parser(sub: Subparsers) -> None:
    from eoslab.course import LAB_MINUTES_PER_TASK, NOTEBOOK_LIMIT, READING_WPM, TIMES_FILE
    from eoslab.labcheck import CELL_TIMEOUT

    course = sub.add_parser("course", help="the course's own facts: `eoslab course time`")
    course.set_defaults(func=cmd_course)
    actions = course.add_subparsers(dest="action", required=True)
    # A sub-parser of its own: argparse gives a positional list that follows another positional (`time`) nothing
    # once an option comes between them (`course time --json NOTEBOOK`).
    s = actions.add_parser(
        "time",
        help="each module's core time (reading + measured run time + lab), the deep dives apart, against 6 h",
    )
    s.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="module notebooks (default: all of them)")
    s.add_argument(
        "--measure",
        action="store_true",
        help=f"run the notebooks on the running cluster first and keep each cell's seconds in {TIMES_FILE}",
    )
    s.add_argument("--labs", action="store_true", help="with --measure: also run each module's solution")
    s.add_argument("--wpm", default=str(READING_WPM), help=f"reading speed, words a minute (default {READING_WPM})")
    s.add_argument(
        "--lab-minutes-per-task",
        default=str(LAB_MINUTES_PER_TASK),
        metavar="MIN",
        help=f"minutes per graded lab task (default {LAB_MINUTES_PER_TASK})",
    )
    s.add_argument("--json", action="store_true", help="print the figures as JSON")
    s.add_argument(
        "--write-notebooks",
        action="store_true",
        help="state the result in each notebook's **Time:** line and the index's map (every core cell measured)",
    )
    s.add_argument("--times", metavar="FILE", help=f"the times file (default: {TIMES_FILE} in the course)")
    s.add_argument("--course", metavar="DIR", help="the course's folder (default: this course)")
    s.add_argument(
        "--cell-timeout",
        default=str(CELL_TIMEOUT),
        metavar="S",
        help=f"with --measure: seconds per cell ({CELL_TIMEOUT})",
    )
    s.add_argument(
        "--notebook-limit",
        default=str(NOTEBOOK_LIMIT),
        metavar="S",
        help=f"with --measure: seconds per notebook (default {NOTEBOOK_LIMIT:g})",
    )
    s.set_defaults(func=cmd_course)


PARSERS: dict[str, Registrar] = {
    "workshop": _workshop_parser,
    "doctor": _doctor_parser,
    "course": _course_parser,
    "lab": _lab_parser,
}
"""Each subcommand's name and the function that adds its parser."""
