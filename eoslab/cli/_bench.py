"""``eoslab bench WHAT``: the course's measurements, one function per WHAT (the kit's own benchmarks are
``python -m tools.kitbench WHAT``, outside the package).

The subcommand's parser sits beside its handler; ``PARSERS`` hands it to ``eoslab.cli``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab.cli._common import Handler, Registrar, Subparsers, cluster_of
from eoslab.runs import PEERS

if TYPE_CHECKING:
    from eoslab.runs import Matrix


def _producers_shape(args: argparse.Namespace) -> dict[str, Any]:
    """The matrix's shape as the options override it; empty when the learner ran the matrix as it is."""
    given = (
        ("rounds", args.rounds),
        ("seconds", args.seconds),
        ("java_peer", args.java),
        ("java_seconds", args.java_seconds),
    )
    return {k: v for k, v in given if v is not None}


def _warming_s(folder: Path) -> float:
    """The seconds the run's warm-up took beyond the one round a warm cluster needs (0 when not recorded)."""
    import pandas as pd

    env = pd.read_parquet(folder / "env.parquet")
    value = env["warmup_beyond_first_s"].iloc[0] if "warmup_beyond_first_s" in env else 0.0
    return 0.0 if pd.isna(value) else float(value)


def _producers_wall(wall: float, shape: dict[str, Any], m: Matrix, warming: float) -> None:
    cold = f", {warming:.0f} s of it warming a new cluster's brokers beyond one round" if warming >= 1 else ""
    if not shape and m.name == "default":  # the learner's run (the C peer, opt-in, is part of the shape)
        from eoslab.bench.targets import DEFAULT_RUN_S

        rest = wall - warming
        verdict = "met" if rest <= DEFAULT_RUN_S else "OVER"
        print(
            f"wall time {wall:.0f} s, measuring and report{cold} (target ≤ {DEFAULT_RUN_S:.0f} s on a quiet 2-core "
            f"laptop with warm brokers: {rest:.0f} s, {verdict}; load now {os.getloadavg()[0]:.1f})"
        )
    else:
        print(f"wall time {wall:.0f} s, measuring and report{cold}")


def _producers(args: argparse.Namespace) -> int:
    from eoslab.bench.producers import estimate_s, run_matrix
    from eoslab.runs import matrix

    shape = _producers_shape(args)
    m = matrix(args.matrix, **shape)
    c_peer = bool(getattr(args, "c_peer", False))
    if c_peer:
        shape = {**shape, "c_peer": True}
    cluster = cluster_of(args)
    cluster.require_running()
    print(
        f"{m.name} matrix: {m.rounds} rounds × {len(m.workloads)} modes, Java peer: {m.java_peer}"
        + (", C peer: rdkafka_performance" if c_peer else "")
        + f"; about {estimate_s(m, c_peer) / 60:.1f} min on a quiet 2-core laptop"
        + (f" (up to {m.warmup_max_s:.0f} s more warming a new cluster's brokers)" if m.warmup_max_s > 0 else "")
    )
    t0 = time.monotonic()
    pin = bool(getattr(args, "pin", False))
    if pin:
        shape = {**shape, "pin": True}
    folder = run_matrix(cluster, m, args.runs_dir, c_peer=c_peer, pin=pin)
    from eoslab.analysis import report, spark_session  # Spark computes the intervals

    print(report(spark_session(kafka=False), folder))
    print(f"written to {folder}")
    _producers_wall(time.monotonic() - t0, shape, m, _warming_s(folder))
    return 0


Chosen = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def _faults_chosen(args: argparse.Namespace) -> Chosen | None:
    """The faults, processors and KIP-848 faults the options name, or None (said on stderr) when one is unknown."""
    from eoslab.bench.faults import KIP848_FAULTS
    from eoslab.demos.pipeline import FAULTS, KINDS

    faults = tuple(args.faults.split(",")) if args.faults else FAULTS
    kinds = tuple(args.kinds.split(",")) if args.kinds else KINDS
    named = {None: KIP848_FAULTS, "none": (), "all": FAULTS}
    kip848 = named[args.kip848] if args.kip848 in named else tuple(args.kip848.split(","))
    for name, given, known in (("--faults", faults, FAULTS), ("--kinds", kinds, KINDS), ("--kip848", kip848, FAULTS)):
        unknown = [x for x in given if x not in known]
        if unknown:
            print(f"{name}: unknown {', '.join(unknown)}; use some of {','.join(known)}", file=sys.stderr)
            return None
    return faults, kinds, kip848


def _print_unfinished(folder: Path) -> None:
    import pandas as pd

    rows = pd.read_parquet(folder / "faults.parquet")
    for r in rows[rows.notes.str.startswith("the cell did not finish")].itertuples():
        print(f"{r.fault} × {r.kind} ({getattr(r, 'group_protocol', 'classic')}): {r.notes}")


def _faults(args: argparse.Namespace) -> int:
    from eoslab.bench.faults import DEFAULT_RECORDS, estimate_s, matrix_text, plan, run_faults

    if (chosen := _faults_chosen(args)) is None:
        return 2
    faults, kinds, kip848 = chosen
    cluster = cluster_of(args)
    cluster.require_running()
    records = args.records or DEFAULT_RECORDS
    todo = len(plan(faults, kinds, kip848))
    print(
        f"fault matrix: {len(faults)} faults × {len(kinds)} processors (+ {todo - len(faults) * len(kinds)}"
        f" EOS cells in a KIP-848 group), {records} records per cell; "
        f"about {estimate_s(faults, kinds, kip848) / 60:.1f} min on a quiet 2-core laptop"
    )
    t0 = time.monotonic()
    folder, cells = run_faults(cluster, records=records, faults=faults, kinds=kinds, kip848=kip848, root=args.runs_dir)
    print(matrix_text(cells))
    bad = [c for c in cells if c.kind == "eos" and not c.verdict.valid()]
    for c in bad:
        print(f"EOS under {c.fault}: {c.verdict.found} ({c.notes})")
    unfinished = todo - len(cells)
    if unfinished:
        _print_unfinished(folder)
    print(f"written to {folder}; wall time {time.monotonic() - t0:.0f} s (load now {os.getloadavg()[0]:.1f})")
    return 1 if bad or unfinished else 0


BENCHES: dict[str, Handler] = {
    "producers": _producers,
    "faults": _faults,
}
"""``eoslab bench WHAT``'s choices, in the order its help lists them, and what each runs."""


def cmd_bench(args: argparse.Namespace) -> int:
    run = BENCHES.get(args.what)
    if run is None:
        print(f"unknown benchmark {args.what!r}: try `eoslab bench producers`", file=sys.stderr)
        return 2
    return run(args)


def _faults_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--records", type=int, default=None, help="faults: input records per cell (default 200)")
    s.add_argument("--faults", default=None, help="faults: which faults, comma-separated (default all six)")
    s.add_argument("--kinds", default=None, help="faults: which processors, comma-separated (default eos,alo)")
    s.add_argument(
        "--kip848",
        default=None,
        help="faults: the faults the EOS processor also meets in a KIP-848 group (group.protocol=consumer), "
        "comma-separated, or none, or all (default kill_processor,kill_group_coordinator,zombie)",
    )


def _bench_parser(sub: Subparsers) -> None:
    s = sub.add_parser("bench", help="the course's measurements: module 06's producers, module 05's fault matrix")
    s.add_argument("what", choices=list(BENCHES))
    s.add_argument("--matrix", choices=["default", "quick"], default="default", help="producers: which workloads")
    s.add_argument("--runs-dir", default=None, help="producers/faults: default $EOSLAB_RUNS or runs/")
    s.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="producers: seconds per mode and round (transactional modes run on until 20 commits)",
    )
    s.add_argument("--rounds", type=int, default=None, help="producers: rounds (every mode once per round)")
    s.add_argument(
        "--java", choices=PEERS, default=None, help="producers: which modes Kafka's producer-perf-test measures"
    )
    s.add_argument("--java-seconds", type=float, default=None, help="producers: the Java tool's measured stretch")
    s.add_argument(
        "--c-peer",
        action="store_true",
        help="producers: also librdkafka's own rdkafka_performance on acks_all and idempotent (built once, ~1 min)",
    )
    s.add_argument(
        "--pin",
        action="store_true",
        help="producers: the client on a core of its own, the cluster's nodes on the others (local backend, Linux)",
    )
    _faults_options(s)
    s.set_defaults(func=cmd_bench)


PARSERS: dict[str, Registrar] = {"bench": _bench_parser}
"""The subcommand's name and the function that adds its parser."""
