"""Where a tier's time goes, printed at the end of the tier: per pytest-xdist worker, and per test file.

Each worker times its items (setup, call and teardown of each) and hands the sums to the controller at its
end (xdist's ``workeroutput``). The controller prints, per worker: the items it ran, the seconds it was busy,
and when it finished after the session started — so an idle tail (one worker done long before the other)
is seen in CI's log, not guessed. Per test file it prints the files that took the most CPU: the worker's own
CPU-seconds and those of the processes it started and reaped during the item (kernels, `eoslab` commands, a Kafka
CLI tool's JVM) — ``os.times()``, one system call per item — and, after an item longer than :data:`LOOK_S`, what
its live descendants spent since the last such look (a session's Spark driver, a kernel kept for a module: a short
item's share of them goes to the next long one). A cluster the tier shares, or a container's processes, are not
the worker's descendants and are not counted. Loaded by the root conftest.py.

With ``EOSLAB_ITEM_SECONDS`` set to a file's path, the controller also writes every item's seconds there (JSON,
node id -> seconds; merged into what the file holds, so one file gathers every tier of a `make test`): the
table the scheduler orders scopes by is made from it (tests/scope_seconds.py).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_T0 = time.time()
_BUSY: list[float] = []
_NODES: dict[str, dict[str, float]] = {}
_FILES: dict[str, list[float]] = {}
"""Per test file: [wall seconds, CPU-seconds, items] of this process's items (a worker's, or the session's)."""
TOP_FILES = 12
LOOK_S = 0.5
"""An item at least this long (wall seconds) also counts its live descendants' CPU (one walk of the process table)."""
_ITEMS: dict[str, float] = {}
"""Per item (node id): its wall seconds, setup to teardown."""
ITEM_SECONDS_ENV = "EOSLAB_ITEM_SECONDS"
_LIVE: dict[tuple[int, float], float] = {}
"""(pid, create time) -> the CPU-seconds a live descendant had spent at the last look."""


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def live_descendants_cpu() -> float:
    """CPU-seconds this process's live descendants spent since the last call (the first call counts all of theirs)."""
    import psutil

    spent = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            key, times = (child.pid, child.create_time()), child.cpu_times()
        except psutil.Error:
            continue
        now = times.user + times.system
        spent += now - _LIVE.get(key, 0.0)
        _LIVE[key] = now
    return spent


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    start, cpu = time.monotonic(), _cpu()
    yield
    wall = time.monotonic() - start
    _BUSY.append(wall)
    _ITEMS[item.nodeid] = round(wall, 2)
    spent = _cpu() - cpu + (live_descendants_cpu() if wall >= LOOK_S else 0.0)
    row = _FILES.setdefault(item.nodeid.split("::")[0], [0.0, 0.0, 0.0])
    row[0], row[1], row[2] = row[0] + wall, row[1] + spent, row[2] + 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)  # set on an xdist worker only
    if output is not None:
        output["timeline"] = {"items": len(_BUSY), "busy": sum(_BUSY), "end": time.time()}
        output["files"] = dict(_FILES)
        output["item_seconds"] = dict(_ITEMS)
        _FILES.clear()
        _ITEMS.clear()
    elif os.environ.get(ITEM_SECONDS_ENV) and _ITEMS:
        write_item_seconds(os.environ[ITEM_SECONDS_ENV], _ITEMS)


def write_item_seconds(path: str, items: dict[str, float]) -> None:
    """Merge ``items`` (node id -> seconds) into the JSON object in ``path`` (created when missing)."""
    file = Path(path)
    try:
        held = json.loads(file.read_text())
    except (OSError, ValueError):
        held = {}
    held.update(items)
    file.write_text(json.dumps(dict(sorted(held.items())), indent=0) + "\n")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    out = getattr(node, "workeroutput", None) or {}
    if "timeline" in out:
        _NODES[node.gateway.id] = out["timeline"]
    _ITEMS.update(out.get("item_seconds", {}))
    for name, (wall, cpu, n) in out.get("files", {}).items():
        row = _FILES.setdefault(name, [0.0, 0.0, 0.0])
        row[0], row[1], row[2] = row[0] + wall, row[1] + cpu, row[2] + n


def summary(nodes: dict[str, dict[str, float]], t0: float) -> list[str]:
    """One line per worker: items, busy seconds, and when it finished (seconds after ``t0``)."""
    if not nodes:
        return []
    last = max(n["end"] for n in nodes.values())
    lines = []
    for name in sorted(nodes):
        n = nodes[name]
        idle = last - n["end"]
        lines.append(
            f"{name}: {int(n['items'])} items, busy {n['busy']:.0f} s, done at {n['end'] - t0:.0f} s"
            + (f" ({idle:.0f} s before the last worker)" if idle >= 1 else " (last)")
        )
    return lines


def by_file(files: dict[str, list[float]], top: int = TOP_FILES) -> list[str]:
    """The ``top`` files by CPU-seconds, one line each, then the rest summed; [] without items."""
    if not files:
        return []
    rows = sorted(files.items(), key=lambda kv: -kv[1][1])
    lines = [f"{cpu:7.0f} CPU-s {wall:7.0f} s wall {int(n):5d} items  {name}" for name, (wall, cpu, n) in rows[:top]]
    rest = rows[top:]
    if rest:
        wall, cpu, n = (sum(r[1][i] for r in rest) for i in range(3))
        lines.append(f"{cpu:7.0f} CPU-s {wall:7.0f} s wall {int(n):5d} items  the other {len(rest)} files")
    total = sum(r[1][1] for r in rows)
    lines.append(f"{total:7.0f} CPU-s in all (the items' processes and their descendants)")
    return lines


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = summary(_NODES, _T0)
    if lines:
        terminalreporter.write_sep("-", "where this tier's time went, per xdist worker")
        for line in lines:
            terminalreporter.write_line(line)
    files = by_file(_FILES)
    if files and len(_FILES) > 1:
        terminalreporter.write_sep("-", "where this tier's CPU went, per test file")
        for line in files:
            terminalreporter.write_line(line)
