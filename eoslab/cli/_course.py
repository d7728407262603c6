"""``eoslab workshop``, ``eoslab doctor`` and ``eoslab lab``: the course as learners and instructors meet it.

Each subcommand's parser sits beside its handler; ``PARSERS`` hands them to ``eoslab.cli``.
"""

from __future__ import annotations

import argparse

from eoslab.cli._common import Registrar, Subparsers, backend_name


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

    from eoslab.course import lab_argv

    argv = lab_argv(None, *args.jupyter_args)
    os.execv(argv[0], argv)
    return 0  # not reached


def _lab_parser(sub: Subparsers) -> None:
    s = sub.add_parser(
        "lab",
        help="open the course in JupyterLab (the repository root served, the index opened); "
        "other arguments go to jupyter lab, e.g. --port=8890 --no-browser",
    )
    s.set_defaults(func=cmd_lab)


PARSERS: dict[str, Registrar] = {"workshop": _workshop_parser, "doctor": _doctor_parser, "lab": _lab_parser}
"""Each subcommand's name and the function that adds its parser."""
