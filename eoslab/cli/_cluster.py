"""``eoslab up/down/reset/status/kill/stop/start/pause/resume/logs/heal``: the cluster's lifecycle and faults.

Each subcommand's parser sits beside its handler; ``PARSERS`` hands them to ``eoslab.cli``.
"""

from __future__ import annotations

import argparse
from functools import partial

from eoslab._heal import heal
from eoslab._ports import LOOPBACK
from eoslab._timeouts import PROBE
from eoslab._up import up
from eoslab.cli._common import Handler, Registrar, Subparsers, cluster_of
from eoslab.cluster import Cluster
from eoslab.errors import EoslabError
from eoslab.faults import ensure_proxy, in_lab_container


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


def _stop_proxy(cluster: Cluster) -> None:
    from eoslab.faults import stop_proxy

    if stop_proxy(cluster.topology):
        print("The fault proxy is stopped.")


def cmd_up(args: argparse.Namespace) -> int:
    cluster = cluster_of(args)
    already = cluster.is_up()
    if not already:
        image = getattr(cluster.backend, "image", None)
        on = f"{cluster.backend.name} backend" + (f", image {image}" if image else "")
        print(f"Starting 3 controllers + 3 brokers ({on}) ...", flush=True)
    pid = up(cluster, timeout=args.timeout)
    print("The cluster is " + ("already up." if already else "up."))
    control = f"control API {LOOPBACK}:{cluster.topology.proxy_control_port}"
    if in_lab_container(cluster.topology):
        print(
            f"The fault proxy runs in the lab container ({control}, published by the lab service): "
            "no proxy is started on this host, which would fight it for the same ports."
        )
    else:
        print(f"The fault proxy runs (pid {pid}; {control}).")
    _print_status(cluster)
    return 0


def _up_parser(sub: Subparsers) -> None:
    s = sub.add_parser("up", help="start the cluster (a no-op when it runs) and wait until it is ready")
    s.add_argument("--timeout", type=float, default=None, help="seconds to wait for ready (default: the backend's)")
    s.set_defaults(func=cmd_up)


def cmd_down(args: argparse.Namespace) -> int:
    cluster = cluster_of(args)
    _stop_proxy(cluster)
    cluster.down()
    print("The cluster is down (data kept; `eoslab reset` deletes it).")
    return 0


def _down_parser(sub: Subparsers) -> None:
    sub.add_parser("down", help="stop every node (data kept)").set_defaults(func=cmd_down)


def cmd_reset(args: argparse.Namespace) -> int:
    cluster = cluster_of(args)
    _stop_proxy(cluster)
    cluster.reset()
    print("The cluster is down and its data deleted: the next `eoslab up` starts a fresh cluster.")
    return 0


def _reset_parser(sub: Subparsers) -> None:
    sub.add_parser("reset", help="stop every node and delete all data").set_defaults(func=cmd_reset)


def cmd_status(args: argparse.Namespace) -> int:
    cluster = cluster_of(args)
    cluster.require_running()
    _print_status(cluster)
    return 0


def _status_parser(sub: Subparsers) -> None:
    sub.add_parser("status", help="nodes, pids, states").set_defaults(func=cmd_status)


def _node_cmd(op: str, done: str) -> Handler:
    """``eoslab kill/stop/start/pause/resume NODE``: the `Cluster` method of that name on one node."""

    def run(args: argparse.Namespace) -> int:
        cluster = cluster_of(args)
        getattr(cluster, op)(args.node)
        print(f"{args.node} {done}.")
        return 0

    run.__name__ = f"cmd_{op}"
    return run


def _node_parser(sub: Subparsers, *, op: str, done: str, helptext: str) -> None:
    s = sub.add_parser(op, help=helptext)
    s.add_argument("node", help="controller-1..3 or broker-1..3")
    s.set_defaults(func=_node_cmd(op, done))


_NODE_OPS = (
    ("kill", "killed (SIGKILL)", "crash a node: SIGKILL"),
    ("stop", "stopped (SIGTERM)", "stop a node cleanly: SIGTERM"),
    ("start", "started", "start a stopped node"),
    ("pause", "paused (SIGSTOP)", "freeze a node: SIGSTOP"),
    ("resume", "resumed (SIGCONT)", "unfreeze a node: SIGCONT"),
)


def cmd_logs(args: argparse.Namespace) -> int:
    cluster = cluster_of(args)
    cluster.node(args.node)  # unknown names fail with the list of names
    print(cluster.logs(args.node, args.lines))
    return 0


def _logs_parser(sub: Subparsers) -> None:
    s = sub.add_parser("logs", help="the last lines of a node's log")
    s.add_argument("node")
    s.add_argument("-n", "--lines", type=int, default=50)
    s.set_defaults(func=cmd_logs)


def cmd_heal(args: argparse.Namespace) -> int:
    cluster = cluster_of(args)
    heal(cluster)
    ensure_proxy(cluster)
    print("Healed: every node runs, every ISR is complete, leaders are back where the course expects them.")
    return 0


def _heal_parser(sub: Subparsers) -> None:
    s = sub.add_parser("heal", help="undo every fault and restore the course's leaders")
    s.set_defaults(func=cmd_heal)


PARSERS: dict[str, Registrar] = {
    "up": _up_parser,
    "down": _down_parser,
    "reset": _reset_parser,
    "status": _status_parser,
    **{op: partial(_node_parser, op=op, done=done, helptext=helptext) for op, done, helptext in _NODE_OPS},
    "logs": _logs_parser,
    "heal": _heal_parser,
}
"""Each subcommand's name and the function that adds its parser."""
