"""The time guard of an item that may measure, in its set-up, a run the tiers share.

pytest-timeout gives every item its hang guard (``timeout`` in pyproject.toml, 300 s). The first item of a worker
that needs the session's fault matrix run or bench run measures it in its set-up (the root conftest.py's
``shared_fault_run`` / ``shared_runs``), and that measurement is minutes of work by design: the fault matrix's 12
cells each wait out Kafka's own timeouts. Under the item's plain guard it ran at 0.80-0.92 of it on this kind's
Intel machine (215-275 s of 300 s, the course tier's three docker clusters beside it) and past it on CI's slower
one (stop 38: killed at 300 s in the heal of a cell that had killed a broker, its 13 tests in error). So an item
that may measure gets its own guard plus :data:`ALLOWANCE` times the measurement's quiet estimate, the figure the
kit prints before a learner's run (``eoslab.bench.faults.estimate_s``, ``eoslab.bench.producers.estimate_s``). A
hang inside a measurement is still caught where it happens: every wait of a cell is bounded and says what it waited for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

RUNS_NOTEBOOKS = ("06_cost_of_exactly_once.ipynb", "lab06_cost.ipynb")
"""The notebooks whose first cell's set-up ensures the shared bench run."""
FAULTS_NOTEBOOKS = ("05_exactly_once_pipeline.ipynb",)
"""The notebooks whose first cell's set-up ensures the shared fault matrix run."""

ALLOWANCE = 3.0
"""A measurement's time in the suite, over its quiet estimate: the fault run (at MIN_RECORDS) 0.7-0.9x, the quick
bench run 2.0-2.1x, in the loaded cluster and course tiers of the Intel machine (docs/reliability.md, session 17);
CI ran its course tier ~1.5x slower than that machine."""


def first_cell(item: Any) -> bool:
    """Whether ``item`` is a notebook's first cell under nbval (the root conftest.py prepares the notebook there)."""
    return ".ipynb::" in item.nodeid and item.nodeid.endswith("::Cell 0")


def measures(item: Any) -> tuple[str, ...]:
    """The shared runs ``item`` may measure in its set-up: ``"faults"``, ``"bench"``, both or none."""
    names = set(getattr(item, "fixturenames", ()))
    notebook = item.path.name if first_cell(item) else ""
    found = []
    if "fault_run" in names or notebook in FAULTS_NOTEBOOKS:
        found.append("faults")
    if "bench_runs" in names or notebook in RUNS_NOTEBOOKS:
        found.append("bench")
    return tuple(found)


def allowance_s(what: str, bench_matrix: str) -> float:
    """:data:`ALLOWANCE` times the quiet estimate of the shared run ``what`` (at the size the suite measures; the
    bench run is of ``bench_matrix``)."""
    from eoslab.bench import faults, producers
    from eoslab.runs import matrix

    if what == "faults":
        return ALLOWANCE * faults.estimate_s()
    return ALLOWANCE * producers.estimate_s(matrix(bench_matrix))


def _own_guard(config: pytest.Config, item: Any) -> float:
    mark = item.get_closest_marker("timeout")
    if mark is not None and mark.args:
        return float(mark.args[0])
    option = getattr(config.option, "timeout", None)
    return float(option if option is not None else config.getini("timeout") or 0)


def guard(config: pytest.Config, items: Iterable[Any], bench_matrix: str) -> None:
    """Give each item that may measure a shared run its own guard plus that measurement's allowance (no guard
    at all, 0, stays none); the shared bench run is of ``bench_matrix``."""
    for item in items:
        what = measures(item)
        own = _own_guard(config, item)
        if what and own > 0:
            item.add_marker(pytest.mark.timeout(own + sum(allowance_s(w, bench_matrix) for w in what)), append=False)
