"""``eoslab``: the command line. One function per subcommand, each returns an exit code.

Nothing imports this module; it only translates arguments into calls on
:class:`eoslab.Cluster` and errors into one sentence on stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

from eoslab._heal import heal
from eoslab._ports import LOOPBACK
from eoslab._timeouts import PROBE
from eoslab._up import up
from eoslab.bench.targets import ANALYSIS_RUNS, PROXY_ROUND_S
from eoslab.cluster import Cluster
from eoslab.errors import EoslabError
from eoslab.faults import ensure_proxy
from eoslab.grading import CELL_TIMEOUT, NOTEBOOK_LIMIT
from eoslab.runs import EOS_PEERS, PEERS


def _cluster(args: argparse.Namespace) -> Cluster:
    return Cluster(args.backend)


def cmd_up(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    already = cluster.is_up()
    if not already:
        image = getattr(cluster.backend, "image", None)
        on = f"{cluster.backend.name} backend" + (f", image {image}" if image else "")
        print(f"Starting 3 controllers + 3 brokers ({on}) ...", flush=True)
    pid = up(cluster, timeout=args.timeout)
    print("The cluster is " + ("already up." if already else "up."))
    print(f"The fault proxy runs (pid {pid}; control API {LOOPBACK}:{cluster.topology.proxy_control_port}).")
    _print_status(cluster)
    return 0


def _stop_proxy(cluster: Cluster) -> None:
    from eoslab.faults import stop_proxy

    if stop_proxy(cluster.topology):
        print("The fault proxy is stopped.")


def cmd_down(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    _stop_proxy(cluster)
    cluster.down()
    print("The cluster is down (data kept; `eoslab reset` deletes it).")
    return 0


def cmd_reset(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    _stop_proxy(cluster)
    cluster.reset()
    print("The cluster is down and its data deleted: the next `eoslab up` starts a fresh cluster.")
    return 0


def _print_status(cluster: Cluster) -> None:
    rows = cluster.status()
    leader = None
    if any(r.state == "running" for r in rows):
        try:
            leader = cluster.quorum(timeout=PROBE).leader_id
        except EoslabError:
            leader = None
    print(f"{'node':<14}{'role':<27}{'id':>4}  {'state':<9}{'pid':>8}  {'rss MB':>7}  ports")
    for r in rows:
        role = r.role + (" (quorum leader)" if r.node_id == leader else "")
        rss = f"{r.rss_mb:.0f}" if r.rss_mb else "-"
        ports = ",".join(map(str, r.ports))
        print(f"{r.name:<14}{role:<27}{r.node_id:>4}  {r.state:<9}{r.pid or '-':>8}  {rss:>7}  {ports}")
    if all(r.state == "running" for r in rows):
        print(
            f"bootstrap servers: {cluster.bootstrap_servers()}  (through the fault proxy: "
            f"{cluster.bootstrap_servers(proxied=True)})"
        )


def cmd_status(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    cluster.require_running()
    _print_status(cluster)
    return 0


def _node_cmd(op: str, done: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        cluster = _cluster(args)
        getattr(cluster, op)(args.node)
        print(f"{args.node} {done}.")
        return 0

    run.__name__ = f"cmd_{op}"
    return run


def cmd_logs(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    cluster.node(args.node)  # unknown names fail with the list of names
    print(cluster.logs(args.node, args.lines))
    return 0


def cmd_heal(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    heal(cluster)
    ensure_proxy(cluster)
    print("Healed: every node runs, every ISR is complete, leaders are back where the course expects them.")
    return 0


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


def cmd_setup(args: argparse.Namespace) -> int:
    """Check Java and resolve the Kafka jars now, so `up` does not do it the first time."""
    import os

    from eoslab import _jars, _java

    if (args.backend or os.environ.get("EOSLAB_BACKEND") or "local").lower() == "local":
        java = _java.java_executable()
        jars = _jars.kafka_jars()
        _jars.check_single_log4j_binding(jars)
        from eoslab import _cds

        archive = _cds.ensure_archive(_jars.kafka_classpath())
        print(f"Java: {java}; Kafka jars: {len(jars)} resolved; class-data-sharing archive: {archive or 'off'}.")
    else:
        from eoslab._paths import offline_dir
        from eoslab.course import load_docker_images

        if (offline := offline_dir()) is not None and (loaded := load_docker_images(offline)):
            print(f"Docker images loaded from the workshop bundle: {', '.join(loaded)}.")
    # The Spark Kafka source of module 06 (its own pom and classpath), for every backend: PySpark runs here.
    spark_jars = _jars.spark_kafka_jars()
    print(f"Spark Kafka source: {len(spark_jars)} jars resolved (eoslab/_java/spark/pom.xml).")
    from eoslab.course import kernel

    if (config := kernel.install()) is not None:
        print(f"Notebook kernels explain a restart or a stopped cluster in one sentence ({config}).")
    return 0


def cmd_image(args: argparse.Namespace) -> int:
    """The Kafka image of the docker backend: build the local one, or make sure one is here (make test)."""
    from eoslab import _image
    from eoslab.cluster import docker_available

    if args.what == "build":
        r = _image.build_image(force=args.force)
        how = "up to date" if r.cached else "built"
        base = f"; base image {r.base_seconds:.0f} s" if r.base_seconds is not None else ""
        print(f"{r.image}: {how} in {r.seconds:.1f} s{base}.")
        return 0
    # ensure: what `make test` calls before the docker tests
    if (why := docker_available()) is not None:
        print(f"eoslab: the docker backend cannot run here ({why}); the docker tests skip.")
        return 0
    image = _image.kafka_image()
    if _image.image_exists(image):
        print(f"Kafka image for the docker backend: {image}.")
        return 0
    if image != _image.LOCAL_IMAGE and _image.pull(image):
        print(f"Kafka image for the docker backend: {image} (pulled).")
        return 0
    r = _image.build_image()
    print(
        f"Kafka image for the docker backend: {r.image} ({'up to date' if r.cached else 'built'} in {r.seconds:.0f} s)."
    )
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    if args.what == "cluster":
        from eoslab.bench.kit import bench_cluster

        bench_cluster(_cluster(args), fresh=args.fresh, starts=args.starts, compare=args.compare)
        return 0
    if args.what == "proxy":
        from eoslab.bench.kit import bench_proxy

        return bench_proxy(_cluster(args), seconds=args.seconds or PROXY_ROUND_S)
    if args.what == "producers":
        from eoslab.bench.producers import estimate_s, run_matrix
        from eoslab.runs import matrix

        shape = {
            k: v
            for k, v in (
                ("rounds", args.rounds),
                ("seconds", args.seconds),
                ("java_peer", args.java),
                ("java_seconds", args.java_seconds),
            )
            if v is not None
        }
        m = matrix(args.matrix, **shape)
        cluster = _cluster(args)
        cluster.require_running()
        print(
            f"{m.name} matrix: {m.rounds} rounds × {len(m.workloads)} modes, Java peer: {m.java_peer}; "
            f"about {estimate_s(m) / 60:.1f} min on a quiet 2-core laptop"
        )
        t0 = time.monotonic()
        folder = run_matrix(cluster, m, args.runs_dir)
        from eoslab.analysis import report, spark_session  # Spark computes the intervals

        print(report(spark_session(kafka=False), folder))
        print(f"written to {folder}")
        wall = time.monotonic() - t0
        if not shape and m.name == "default":  # the learner's run, against its target
            from eoslab.bench.targets import DEFAULT_RUN_S

            verdict = "met" if wall <= DEFAULT_RUN_S else "OVER"
            print(
                f"wall time {wall:.0f} s, measuring and report (target ≤ {DEFAULT_RUN_S:.0f} s on a quiet 2-core "
                f"laptop: {verdict}; load now {os.getloadavg()[0]:.1f})"
            )
        else:
            print(f"wall time {wall:.0f} s, measuring and report")
        return 0
    if args.what == "faults":
        return _bench_faults(args)
    if args.what == "wire":
        from eoslab.bench.wire import bench_wire

        cluster = _cluster(args)
        cluster.require_running()
        return bench_wire(cluster, args.modes.split(",") if args.modes else EOS_PEERS)
    if args.what == "analyse":
        from eoslab.analysis import bench_analyse

        return bench_analyse(args.runs_dir, synthetic=args.synthetic)
    print(f"unknown benchmark {args.what!r}: try `eoslab bench cluster`", file=sys.stderr)
    return 2


def _bench_faults(args: argparse.Namespace) -> int:
    from eoslab.bench.faults import DEFAULT_RECORDS, estimate_s, matrix_text, run_faults
    from eoslab.demos import FAULTS, KINDS

    faults = tuple(args.faults.split(",")) if args.faults else FAULTS
    kinds = tuple(args.kinds.split(",")) if args.kinds else KINDS
    for name, given, known in (("--faults", faults, FAULTS), ("--kinds", kinds, KINDS)):
        unknown = [x for x in given if x not in known]
        if unknown:
            print(f"{name}: unknown {', '.join(unknown)}; use some of {','.join(known)}", file=sys.stderr)
            return 2
    cluster = _cluster(args)
    cluster.require_running()
    records = args.records or DEFAULT_RECORDS
    print(
        f"fault matrix: {len(faults)} faults × {len(kinds)} processors, {records} records per cell; "
        f"about {estimate_s(faults, kinds) / 60:.1f} min on a quiet 2-core laptop"
    )
    t0 = time.monotonic()
    folder, cells = run_faults(cluster, records=records, faults=faults, kinds=kinds, root=args.runs_dir)
    print(matrix_text(cells))
    bad = [c for c in cells if c.kind == "eos" and not c.verdict.valid()]
    for c in bad:
        print(f"EOS under {c.fault}: {c.verdict.found} ({c.notes})")
    unfinished = len(faults) * len(kinds) - len(cells)
    if unfinished:
        import pandas as pd

        rows = pd.read_parquet(folder / "faults.parquet")
        for r in rows[rows.notes.str.startswith("the cell did not finish")].itertuples():
            print(f"{r.fault} × {r.kind}: {r.notes}")
    print(f"written to {folder}; wall time {time.monotonic() - t0:.0f} s (load now {os.getloadavg()[0]:.1f})")
    return 1 if bad or unfinished else 0


def cmd_grade(args: argparse.Namespace) -> int:
    from pathlib import Path

    from eoslab import grading

    if args.class_dir:
        root = Path(args.class_dir)
        rows = grading.collect(root, rerun=args.rerun, limit=args.limit, cell_timeout=args.cell_timeout)
        out = root / "gradebook.csv"
        grading.write_gradebook(rows, out)
        print(grading.summary(rows))
        print(f"gradebook: {out}")
        return 0
    if not args.notebook:
        print(
            "eoslab: give a lab notebook (eoslab grade labs/lab01_idempotence.ipynb) or --class DIR.", file=sys.stderr
        )
        return 2
    report = grading.grade_notebook(args.notebook, cell_timeout=args.cell_timeout)
    print(report.table())
    print(f"report: {Path(args.notebook).with_suffix('.report.json')}")
    return 0 if report.score == report.max_score else 1


def cmd_labs(args: argparse.Namespace) -> int:
    from pathlib import Path

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


def cmd_workshop(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from eoslab.course import course_root, pack
    from eoslab.topology import KAFKA_IMAGE

    images = list(args.docker_image)
    if not images and (args.backend or os.environ.get("EOSLAB_BACKEND") or "local").lower() == "docker":
        images = [os.environ.get("EOSLAB_KAFKA_IMAGE") or KAFKA_IMAGE]  # the image the docker backend runs
    result = pack(Path(args.dir), root=course_root(), docker_images=images, wheels=not args.no_wheels)
    print(result.summary())
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from eoslab.course import doctor

    report = doctor()
    print(report)
    return 0 if report.ready else 1


def cmd_lab(args: argparse.Namespace) -> int:
    """Replace this process with JupyterLab serving the course (the cluster is `eoslab up`'s job)."""
    import os

    from eoslab.course import lab_argv

    argv = lab_argv(None, *args.jupyter_args)
    os.execv(argv[0], argv)
    return 0  # not reached


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eoslab", description="The eoslab Kafka cluster and course kit.")
    p.add_argument("--backend", choices=["local", "docker"], default=None, help="default: $EOSLAB_BACKEND or local")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("up", help="start the cluster (a no-op when it runs) and wait until it is ready")
    s.add_argument("--timeout", type=float, default=None, help="seconds to wait for ready (default: the backend's)")
    s.set_defaults(func=cmd_up)
    sub.add_parser("down", help="stop every node (data kept)").set_defaults(func=cmd_down)
    sub.add_parser("reset", help="stop every node and delete all data").set_defaults(func=cmd_reset)
    sub.add_parser("status", help="nodes, pids, states").set_defaults(func=cmd_status)
    for op, done, helptext in (
        ("kill", "killed (SIGKILL)", "crash a node: SIGKILL"),
        ("stop", "stopped (SIGTERM)", "stop a node cleanly: SIGTERM"),
        ("start", "started", "start a stopped node"),
        ("pause", "paused (SIGSTOP)", "freeze a node: SIGSTOP"),
        ("resume", "resumed (SIGCONT)", "unfreeze a node: SIGCONT"),
    ):
        s = sub.add_parser(op, help=helptext)
        s.add_argument("node", help="controller-1..3 or broker-1..3")
        s.set_defaults(func=_node_cmd(op, done))
    s = sub.add_parser("logs", help="the last lines of a node's log")
    s.add_argument("node")
    s.add_argument("-n", "--lines", type=int, default=50)
    s.set_defaults(func=cmd_logs)
    s = sub.add_parser("heal", help="undo every fault and restore the course's leaders")
    s.set_defaults(func=cmd_heal)
    s = sub.add_parser("render", help="write docker-compose.yml from the topology")
    s.add_argument("-o", "--output", default="docker-compose.yml")
    s.add_argument("--check", action="store_true", help="fail if the file differs from the rendering")
    s.set_defaults(func=cmd_render)
    sub.add_parser("setup", help="check Java 17+ and resolve the Kafka jars").set_defaults(func=cmd_setup)
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
    sub.add_parser(
        "doctor", help="is this machine ready? Java, memory, ports, CPUs, disk, jars, Docker, Chromium"
    ).set_defaults(func=cmd_doctor)
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
    s = sub.add_parser(
        "lab",
        help="open the course in JupyterLab (the repository root served, the index opened); "
        "other arguments go to jupyter lab, e.g. --port=8890 --no-browser",
    )
    s.set_defaults(func=cmd_lab)
    s = sub.add_parser("labs", help="generate labs/ from solutions/")
    s.add_argument("--check", action="store_true", help="fail if a lab differs from its solution")
    s.set_defaults(func=cmd_labs)
    s = sub.add_parser("image", help="the docker backend's Kafka image: build the local one (no registry needed)")
    s.add_argument("what", choices=["build", "ensure"], help="build: eoslab/kafka (cached); ensure: one is here")
    s.add_argument("--force", action="store_true", help="build: rebuild from scratch (no cache)")
    s.set_defaults(func=cmd_image)
    s = sub.add_parser("bench", help="benchmarks that print figures")
    s.add_argument("what", choices=["cluster", "proxy", "producers", "faults", "wire", "analyse"])
    s.add_argument("--matrix", choices=["default", "quick"], default="default", help="producers: which workloads")
    s.add_argument("--runs-dir", default=None, help="producers/faults/analyse: default $EOSLAB_RUNS or runs/")
    s.add_argument(
        "--synthetic",
        type=int,
        default=ANALYSIS_RUNS,
        help="analyse: also time the analysis over this many generated runs (0: only the real ones)",
    )
    s.add_argument(
        "--seconds",
        type=float,
        default=None,
        help=f"proxy: seconds per measured round (default {PROXY_ROUND_S:g}); producers: seconds per mode and round "
        "(transactional modes run on until 20 commits)",
    )
    s.add_argument("--rounds", type=int, default=None, help="producers: rounds (every mode once per round)")
    s.add_argument(
        "--java", choices=PEERS, default=None, help="producers: which modes Kafka's producer-perf-test measures"
    )
    s.add_argument("--java-seconds", type=float, default=None, help="producers: the Java tool's measured stretch")
    s.add_argument("--records", type=int, default=None, help="faults: input records per cell (default 200)")
    s.add_argument("--faults", default=None, help="faults: which faults, comma-separated (default all six)")
    s.add_argument("--kinds", default=None, help="faults: which processors, comma-separated (default eos,alo)")
    s.add_argument("--modes", default=None, help=f"wire: modes, comma-separated (default {','.join(EOS_PEERS)})")
    s.add_argument("--fresh", action="store_true", help="cluster: also time a start from empty storage (deletes data)")
    s.add_argument("--starts", type=int, default=1, help="cluster: cold starts to time, one after another")
    s.add_argument(
        "--compare",
        action="store_true",
        help="cluster: each start twice, the start path before issue 14 (EOSLAB_COLD_START=before) and today's",
    )
    s.set_defaults(func=cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.jupyter_args = unknown  # `eoslab lab --port=8890`: jupyter lab's own options
    try:
        return int(args.func(args))
    except EoslabError as exc:
        print(f"eoslab: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # `eoslab status | head`
        return 0
    except KeyboardInterrupt:
        print("eoslab: interrupted.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
