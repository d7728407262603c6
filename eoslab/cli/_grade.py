"""``eoslab submit``, ``eoslab grade`` and ``eoslab labs``: a learner's hand-in, grading a learner's notebooks or
a class, and labs from solutions.

Each subcommand's parser sits beside its handler; ``PARSERS`` hands them to ``eoslab.cli``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eoslab.classroom import NOTEBOOK_LIMIT
from eoslab.cli._common import Registrar, Subparsers, backend_name
from eoslab.labcheck import CELL_TIMEOUT


def _grade_class(args: argparse.Namespace) -> int:
    from eoslab import classroom

    root = Path(args.class_dir)
    try:
        book = classroom.grade_class(
            root,
            rerun=args.rerun,
            course=args.course,
            workers=args.workers,
            clusters="one" if args.one_cluster else "own",
            backend=backend_name(args),
            limit=args.limit,
            cell_timeout=args.cell_timeout,
        )
    except KeyboardInterrupt:
        print(
            f"eoslab: interrupted; every notebook graded so far is kept in {root / 'gradebook.jsonl'}: "
            "run the same command again to grade the rest.",
            file=sys.stderr,
        )
        return 130
    print(book.text)
    if args.rerun:
        print(f"graded {book.graded_now} notebooks now, {book.kept} kept from an earlier run (gradebook.jsonl)")
    if book.cluster_starts:
        took = ", ".join(f"{k} in {s:.0f} s" for k, s in book.cluster_starts.items())
        print(f"grading clusters started beside yours (and stopped): {took}")
    print(f"gradebook: {book.path}")
    for path in book.exports:
        print(f"for your LMS and learners: {path}")
    return 0


def _classroom(labs: Path) -> int:
    """One ``labNN=<base64>`` line per lab, for ``$GITHUB_OUTPUT``: GitHub Classroom's reporter reads them."""
    from eoslab.classroom import classroom_outputs

    for runner, encoded in classroom_outputs(labs).items():
        print(f"{runner}={encoded}")
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from eoslab import labcheck

    if args.class_dir:
        return _grade_class(args)
    if args.classroom:
        return _classroom(Path(args.classroom))
    if not args.notebook:
        print(
            "eoslab: give a lab notebook (eoslab grade labs/lab01_idempotence.ipynb) or --class DIR.", file=sys.stderr
        )
        return 2
    report = labcheck.grade_notebook(args.notebook, cell_timeout=args.cell_timeout)
    print(report.table())
    print(f"report: {Path(args.notebook).with_suffix('.report.json')}")
    return 0 if report.score == report.max_score else 1


def _grade_parser(sub: Subparsers) -> None:
    s = sub.add_parser("grade", help="grade a lab notebook, or a class folder of them")
    s.add_argument("notebook", nargs="?")
    s.add_argument(
        "--class",
        dest="class_dir",
        metavar="DIR",
        help="the class's submission-*.zip (from `eoslab submit`) and/or one sub-folder per learner (lab notebooks "
        "and their .report.json)",
    )
    s.add_argument(
        "--rerun",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --class: grade every notebook again with this kit (the default); --no-rerun counts the learners' "
        "own reports instead, and the gradebook says they are untrusted",
    )
    s.add_argument(
        "--course",
        metavar="DIR",
        help="with --class: your course folder, whose solutions/ (or labs/) the check cells are taken from "
        "(default: this course)",
    )
    s.add_argument(
        "--workers",
        metavar="N",
        type=_workers,
        default=1,
        help="with --class: notebooks graded at once (default 1), each on a cluster of its own: the running one and "
        "N-1 started for the run (ports +2500, +3000, ...; about 3.8 GB and a core each), stopped at its end",
    )
    s.add_argument(
        "--one-cluster",
        action="store_true",
        help="with --class: the N workers all grade on the running cluster (labs that break nodes or set proxy "
        "rules then run alone, one at a time)",
    )
    s.add_argument(
        "--classroom",
        metavar="LABS",
        help="print GitHub Classroom's results of every lab in LABS (one labNN=<base64> line each, for "
        "$GITHUB_OUTPUT), from the reports `eoslab grade` wrote beside them: each task's points (the learner's "
        "workflow)",
    )
    s.add_argument("--limit", type=float, default=NOTEBOOK_LIMIT, help="with --class: seconds per notebook, then 0")
    s.add_argument("--cell-timeout", type=int, default=CELL_TIMEOUT)
    s.set_defaults(func=cmd_grade)


def cmd_labs(args: argparse.Namespace) -> int:
    from eoslab._paths import project_root
    from eoslab.classroom import generate_labs

    root = project_root() or Path.cwd()
    changed = generate_labs(root, check=args.check)
    if args.check and changed:
        print(
            "eoslab: these labs differ from their solutions: "
            + ", ".join(str(p) for p in changed)
            + "; run `eoslab labs`.",
            file=sys.stderr,
        )
        return 1
    for p in changed:
        print(f"wrote {p}")
    return 0


def _labs_parser(sub: Subparsers) -> None:
    s = sub.add_parser("labs", help="generate labs/ from solutions/")
    s.add_argument("--check", action="store_true", help="fail if a lab differs from its solution")
    s.set_defaults(func=cmd_labs)


def _workers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of worker processes, 1 or more")
    return n


def _learner_name(args: argparse.Namespace) -> str | None:
    """``--name``, else asked once on a terminal; None where no one can answer (a pipe, a script)."""
    if args.name:
        return str(args.name)
    if not sys.stdin.isatty():
        return None
    try:
        return input("Your name, as your instructor knows you: ")
    except EOFError:
        return None


def cmd_submit(args: argparse.Namespace) -> int:
    from eoslab import classroom
    from eoslab.course import course_root
    from eoslab.runs import runs_dir

    name = _learner_name(args)
    if not name or not name.strip():
        print('eoslab: give your name with --name "Your Name" (as your instructor knows you).', file=sys.stderr)
        return 2
    course = Path(args.course) if args.course else course_root()
    archive = classroom.write_submission(
        course,
        learner=name,
        dest=Path(args.out) if args.out else Path.cwd(),
        runs=Path(args.runs) if args.runs else runs_dir(),
        backend=backend_name(args),
    )
    print(archive.summary())
    return 0


def _submit_parser(sub: Subparsers) -> None:
    s = sub.add_parser("submit", help="hand in: one archive of your labs, their reports and your runs, with a manifest")
    s.add_argument("--name", help="your name, as your instructor knows you (asked if not given)")
    s.add_argument("--course", metavar="DIR", help="the course folder holding labs/ (default: this course)")
    s.add_argument("--runs", metavar="DIR", help="your module-06 runs (default: $EOSLAB_RUNS, else the course's runs/)")
    s.add_argument("--out", metavar="DIR", help="where to write the archive (default: the current folder)")
    s.set_defaults(func=cmd_submit)


PARSERS: dict[str, Registrar] = {"submit": _submit_parser, "grade": _grade_parser, "labs": _labs_parser}
"""Each subcommand's name and the function that adds its parser."""
