"""``eoslab render`` and ``eoslab setup``: the kit's own files, made ahead of `eoslab up`
(``docker-compose.yml`` from the topology; Java checked, jars resolved, kernels taught to explain).

Each subcommand's parser sits beside its handler; ``PARSERS`` hands them to ``eoslab.cli``.
"""

from __future__ import annotations

import argparse
import sys

from eoslab.cli._common import Registrar, Subparsers, backend_name


def cmd_render(args: argparse.Namespace) -> int:
    from eoslab._compose import render_compose

    text = render_compose()
    if args.check:
        with open(args.output) as fh:
            if fh.read() != text:
                print(f"{args.output} differs from the topology: run `eoslab render`.", file=sys.stderr)
                return 1
        return 0
    with open(args.output, "w") as fh:
        fh.write(text)
    print(f"wrote {args.output}")
    return 0


def _render_parser(sub: Subparsers) -> None:
    s = sub.add_parser("render", help="write docker-compose.yml from the topology")
    s.add_argument("-o", "--output", default="docker-compose.yml")
    s.add_argument("--check", action="store_true", help="fail if the file differs from the rendering")
    s.set_defaults(func=cmd_render)


def _setup_local() -> None:
    from eoslab import _cds, _jars, _java

    java = _java.java_executable()
    jars = _jars.kafka_jars()
    _jars.check_single_log4j_binding(jars)
    archive = _cds.ensure_archive(_jars.kafka_classpath())
    print(f"Java: {java}; Kafka jars: {len(jars)} resolved; class-data-sharing archive: {archive or 'off'}.")


def _setup_docker() -> None:
    from eoslab._paths import offline_dir
    from eoslab.course import load_docker_images

    if (offline := offline_dir()) is not None and (loaded := load_docker_images(offline)):
        print(f"Docker images loaded from the workshop bundle: {', '.join(loaded)}.")


def cmd_setup(args: argparse.Namespace) -> int:
    """Check Java and resolve the Kafka jars now, so `up` does not do it the first time."""
    from eoslab import _jars

    if backend_name(args) == "local":
        _setup_local()
    else:
        _setup_docker()
    # The Spark Kafka source of module 06 (its own pom and classpath), for every backend: PySpark runs here.
    spark_jars = _jars.spark_kafka_jars()
    print(f"Spark Kafka source: {len(spark_jars)} jars resolved (eoslab/_java/spark/pom.xml).")
    from eoslab.course import kernel

    if (config := kernel.install()) is not None:
        print(f"Notebook kernels explain a restart or a stopped cluster in one sentence ({config}).")
    return 0


def _setup_parser(sub: Subparsers) -> None:
    sub.add_parser("setup", help="check Java 17+ and resolve the Kafka jars").set_defaults(func=cmd_setup)


def cmd_classpath(args: argparse.Namespace) -> int:
    """The Kafka jars the local backend runs (kafka-clients among them), joined for ``java -cp``: what
    examples/java/EosLoop.java needs. Resolves them first, as `eoslab setup` does (Maven, or the workshop bundle)."""
    from eoslab import _jars

    print(_jars.kafka_classpath())
    return 0


def _classpath_parser(sub: Subparsers) -> None:
    s = sub.add_parser("classpath", help='print the Kafka client jars\' classpath: java -cp "$(eoslab classpath)" ...')
    s.set_defaults(func=cmd_classpath)


PARSERS: dict[str, Registrar] = {"render": _render_parser, "setup": _setup_parser, "classpath": _classpath_parser}
"""Each subcommand's name and the function that adds its parser."""
