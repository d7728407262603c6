"""``eoslab grade`` and ``eoslab labs``: grading a learner's notebooks or a class, and labs from solutions.

Each subcommand's parser sits beside its handler; ``PARSERS`` hands them to ``eoslab.cli``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from eoslab.cli._common import Registrar, Subparsers
from eoslab.grading import CELL_TIMEOUT, NOTEBOOK_LIMIT


def _grade_class(args: argparse.Namespace) -> int:
    from eoslab import grading

    root = Path(args.class_dir)
    rows = grading.collect(root, rerun=args.rerun, limit=args.limit, cell_timeout=args.cell_timeout)
    out = root / "gradebook.csv"
    grading.write_gradebook(rows, out)
    print(grading.summary(rows))
    print(f"gradebook: {out}")
    return 0


def cmd_grade(args: argparse.Namespace) -> int:
    from eoslab import grading

    if args.class_dir:
        return _grade_class(args)
    if not args.notebook:
        print(
            "eoslab: give a lab notebook (eoslab grade labs/lab01_idempotence.ipynb) or --class DIR.", file=sys.stderr
        )
        return 2
    report = grading.grade_notebook(args.notebook, cell_timeout=args.cell_timeout)
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
        help="one sub-folder per learner, holding lab notebooks and/or their .report.json (checked by sha256)",
    )
    s.add_argument("--rerun", action="store_true", help="with --class: grade the notebooks again")
    s.add_argument("--limit", type=float, default=NOTEBOOK_LIMIT, help="with --rerun: seconds per notebook")
    s.add_argument("--cell-timeout", type=int, default=CELL_TIMEOUT)
    s.set_defaults(func=cmd_grade)


def cmd_labs(args: argparse.Namespace) -> int:
    from eoslab._paths import project_root
    from eoslab.grading import generate_labs

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


PARSERS: dict[str, Registrar] = {"grade": _grade_parser, "labs": _labs_parser}
"""Each subcommand's name and the function that adds its parser."""
