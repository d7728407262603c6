"""``eoslab``: the command line. One function per subcommand, each returns an exit code.

Nothing imports this package; it only translates arguments into calls on :class:`eoslab.Cluster`
and the kit, and errors into one sentence on stderr. Each command group is a module that keeps
every subcommand's parser beside its handler and lists them in its ``PARSERS``:

- ``_cluster``: up, down, reset, status, kill, stop, start, pause, resume, logs, heal
- ``_kit``: render, setup, classpath
- ``_course``: workshop, doctor, course, lab
- ``_grade``: submit, grade, labs
- ``_image``: image
- ``_bench``: bench
"""

from __future__ import annotations

import argparse
import os
import sys

from eoslab import errors
from eoslab.cli import _bench, _cluster, _common, _course, _grade, _image, _kit

__all__ = ["HELP_ORDER", "build_parser", "main"]

HELP_ORDER = (
    "up",
    "down",
    "reset",
    "status",
    "kill",
    "stop",
    "start",
    "pause",
    "resume",
    "logs",
    "heal",
    "render",
    "setup",
    "classpath",
    "workshop",
    "doctor",
    "course",
    "submit",
    "grade",
    "lab",
    "labs",
    "image",
    "bench",
)
"""The subcommands in the order ``eoslab --help`` lists them: the cluster first, then the kit and the course."""


def _registrars() -> dict[str, _common.Registrar]:
    modules = (_cluster, _kit, _course, _grade, _image, _bench)
    found: dict[str, _common.Registrar] = {}
    for module in modules:
        found.update(module.PARSERS)
    return found


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eoslab", description="The eoslab Kafka cluster and course kit.")
    p.add_argument("--backend", choices=["local", "docker"], default=None, help="default: $EOSLAB_BACKEND or local")
    sub = p.add_subparsers(dest="command", required=True)
    registrars = _registrars()  # tests/unit/test_cli.py: HELP_ORDER names each of them once
    for name in HELP_ORDER:
        registrars[name](sub)
    return p


def _stdout_is_gone() -> bool:
    """True when standard output is a pipe whose reader has closed it (then a BrokenPipeError is expected and
    harmless); a broken pipe elsewhere — between the kit's own processes — is an error to report."""
    try:
        import select

        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll() (Windows) or no file descriptor: as before
        return True


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.jupyter_args = unknown  # `eoslab lab --port=8890`: jupyter lab's own options
    try:
        return int(args.func(args))
    except errors.EoslabError as exc:
        print(f"eoslab: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError as exc:
        if _stdout_is_gone():  # `eoslab status | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
            return 0
        print(f"eoslab: a pipe to one of its own processes broke ({exc}): run the command again.", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("eoslab: interrupted.", file=sys.stderr)
        return 130
