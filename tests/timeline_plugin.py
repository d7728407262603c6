"""Where a tier's wall time goes on its pytest-xdist workers, printed at the end of the tier.

Each worker times its items (setup, call and teardown of each) and hands the sums to the controller at its
end (xdist's ``workeroutput``). The controller prints, per worker: the items it ran, the seconds it was busy,
and when it finished after the session started — so an idle tail (one worker done long before the other)
is seen in CI's log, not guessed. Loaded by the root conftest.py; silent without xdist.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

import pytest

_T0 = time.time()
_BUSY: list[float] = []
_NODES: dict[str, dict[str, float]] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    start = time.monotonic()
    yield
    _BUSY.append(time.monotonic() - start)


def pytest_sessionfinish(session: pytest.Session) -> None:
    output = getattr(session.config, "workeroutput", None)  # set on an xdist worker only
    if output is not None:
        output["timeline"] = {"items": len(_BUSY), "busy": sum(_BUSY), "end": time.time()}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    out = getattr(node, "workeroutput", None) or {}
    if "timeline" in out:
        _NODES[node.gateway.id] = out["timeline"]


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


def pytest_terminal_summary(terminalreporter: Any) -> None:
    lines = summary(_NODES, _T0)
    if lines:
        terminalreporter.write_sep("-", "where this tier's time went, per xdist worker")
        for line in lines:
            terminalreporter.write_line(line)
