"""``python -m tools.kitbench WHAT``: the kit's own benchmarks, one function per WHAT, from the course's root.

They measure the kit (the cluster's start-up, the fault proxy, the wire, librdkafka's spin, Spark's analysis,
the class rerun), not Kafka's exactly-once: the course's measurements stay ``eoslab bench producers|faults``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from eoslab.cluster import Cluster
from eoslab.errors import EoslabError
from eoslab.runs import EOS_PEERS
from tools.kitbench.targets import ANALYSIS_RUNS, PROXY_ROUND_S

Handler = Callable[[argparse.Namespace], int]


def _cluster_of(args: argparse.Namespace) -> Cluster:
    return Cluster(args.backend)


def _cluster(args: argparse.Namespace) -> int:
    from tools.kitbench.cluster import bench_cluster

    bench_cluster(_cluster_of(args), fresh=args.fresh, starts=args.starts, compare=args.compare)
    return 0


def _proxy(args: argparse.Namespace) -> int:
    from tools.kitbench.proxy import bench_proxy

    return bench_proxy(_cluster_of(args), seconds=args.seconds or PROXY_ROUND_S)


def _wire(args: argparse.Namespace) -> int:
    from tools.kitbench.wire import bench_wire

    cluster = _cluster_of(args)
    cluster.require_running()
    return bench_wire(cluster, args.modes.split(",") if args.modes else EOS_PEERS)


def _spin(args: argparse.Namespace) -> int:
    from tools.kitbench.spin import bench_spin, chosen

    cluster = _cluster_of(args)
    cluster.require_running()
    return bench_spin(
        cluster,
        chosen(args.variants),
        rounds=args.rounds or 2,
        seconds=args.seconds or 4.0,
        txn=bool(args.txn),
        root=args.runs_dir,
    )


def _grading(args: argparse.Namespace) -> int:
    from eoslab._paths import project_root
    from tools.kitbench.grading import bench_grading, chosen_labs

    labs, unknown = chosen_labs(args.labs)
    if unknown or not labs:
        print(f"--labs: unknown {', '.join(unknown) or args.labs}; use some of 01,02,03,04,05,06", file=sys.stderr)
        return 2
    if args.learners < 1 or args.workers < 2:
        print("give --learners 1 or more and --workers 2 or more (it is compared with 1 worker)", file=sys.stderr)
        return 2
    return bench_grading(
        _cluster_of(args),
        course=Path(args.course) if args.course else (project_root() or Path.cwd()),
        learners=args.learners,
        workers=args.workers,
        labs=labs,
        root=args.runs_dir,
        keep=Path(args.keep) if args.keep else None,
    )


def _analyse(args: argparse.Namespace) -> int:
    from tools.kitbench.analyse import bench_analyse

    return bench_analyse(args.runs_dir, synthetic=args.synthetic)


BENCHES: dict[str, Handler] = {
    "cluster": _cluster,
    "proxy": _proxy,
    "wire": _wire,
    "spin": _spin,
    "analyse": _analyse,
    "grading": _grading,
}
"""The choices of WHAT, in the order the help lists them, and what each runs."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.kitbench", description=__doc__.splitlines()[0].strip("`"))
    p.add_argument("--backend", choices=["local", "docker"], default=None, help="default: $EOSLAB_BACKEND or local")
    p.add_argument("what", choices=list(BENCHES))
    p.add_argument("--runs-dir", default=None, help="spin/analyse/grading: default $EOSLAB_RUNS or runs/")
    p.add_argument(
        "--synthetic",
        type=int,
        default=ANALYSIS_RUNS,
        help="analyse: also time the analysis over this many generated runs (0: only the real ones)",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=None,
        help=f"proxy: seconds per measured round (default {PROXY_ROUND_S:g}); spin: seconds per layout and round",
    )
    p.add_argument("--rounds", type=int, default=None, help="spin: rounds (every layout once per round)")
    p.add_argument("--modes", default=None, help=f"wire: modes, comma-separated (default {','.join(EOS_PEERS)})")
    p.add_argument(
        "--variants",
        default=None,
        help="spin: which layouts, comma-separated (default course,linger100,p15,mif1,p15s0,p18s0)",
    )
    p.add_argument(
        "--txn", action="store_true", help="spin: also a transactional producer (100 ms) in the course layout"
    )
    p.add_argument("--fresh", action="store_true", help="cluster: also time a start from empty storage (deletes data)")
    p.add_argument("--starts", type=int, default=1, help="cluster: cold starts to time, one after another")
    p.add_argument(
        "--compare",
        action="store_true",
        help="cluster: each start twice, without the class-data-sharing archive (EOSLAB_CDS=0) and with it (local)",
    )
    p.add_argument("--learners", type=int, default=2, help="grading: learners in the generated class")
    p.add_argument("--workers", type=int, default=2, help="grading: workers of the second run (the first has 1)")
    p.add_argument("--labs", default=None, help="grading: labs, comma-separated, e.g. 01,04 (default all six)")
    p.add_argument("--course", default=None, help="grading: the course whose solutions/ are copied (default: this one)")
    p.add_argument("--keep", default=None, metavar="DIR", help="grading: keep the generated classes under DIR")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return BENCHES[args.what](args)
    except EoslabError as exc:
        print(f"kitbench: {exc}", file=sys.stderr)
        return 1
