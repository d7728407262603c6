"""A module 07 program run as its own OS process, its clients recorded: ``python -m eoslab.m07_production.child``.

The program is a plain function ``name(bootstrap, src, out, group, instance)`` of confluent-kafka code in
a file (:func:`eoslab.m07_production.lesson.write_program` writes one from a notebook cell). The child puts the
recording clients in ``confluent_kafka``'s place (:mod:`eoslab.m07_production._recorder`), imports the
file and calls the function: the history holds what the program's clients did.

SIGTERM ends the program where it is (SystemExit at its next Python line: a ``consume`` returns within its
timeout), exit 0. A Kafka error the program lets out exits 3 if fatal (fenced: a supervisor restarts it),
4 otherwise; any other exception exits 4, its last line on stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import sys
import traceback
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from eoslab.history import HistoryWriter
from eoslab.m07_production._recorder import abort_open, install

EXIT_FATAL = 3
EXIT_ERROR = 4


def load_program(spec: str) -> Any:
    """The function ``"path/to/file.py:function"`` names."""
    where, _, name = spec.rpartition(":")
    module_spec = importlib.util.spec_from_file_location(f"eoslab_program_{Path(where).stem}", where)
    if module_spec is None or module_spec.loader is None:
        raise SystemExit(f"program {spec!r}: {where} cannot be imported")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return getattr(module, name)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m eoslab.m07_production.child", description=__doc__.split("\n")[0])
    ap.add_argument("--program", required=True, help="FILE.py:FUNCTION")
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--group", required=True)
    ap.add_argument("--instance", type=int, default=0, help="which instance of the program this is (0, 1, ...)")
    ap.add_argument("--history", required=True)
    ap.add_argument("--process", required=True, help="this incarnation's name in the history")
    ap.add_argument("--die-at", help="after-offsets:N or after-commit:N: SIGKILL itself there (a fault point)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    def on_term(signum: int, frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_term)
    with HistoryWriter(args.history, process=args.process) as h:
        install(h, args.die_at)
        program = load_program(args.program)
        try:
            program(args.bootstrap, args.input, args.output, args.group, args.instance)
        except KafkaException as e:
            err = e.args[0]
            print(f"{args.process}: stopped on {err.name()} (fatal={err.fatal()}): {err.str()}", file=sys.stderr)
            # after a fatal error librdkafka refuses every call with _FATAL, itself not flagged fatal
            return EXIT_FATAL if err.fatal() or err.code() == KafkaError._FATAL else EXIT_ERROR
        except SystemExit as e:  # SIGTERM: stopped where it was
            abort_open()
            return int(e.code or 0)
        except Exception as e:  # noqa: BLE001 - the program's own code: say where it failed, exit
            traceback.print_exc(file=sys.stderr)
            print(f"{args.process}: the program raised {type(e).__name__}: {e}", file=sys.stderr)
            return EXIT_ERROR
    return 0
