"""A pytest plugin for ``eoslab grade``: the outcome of every notebook cell, by cell id and tags.

nbval names cells by position ("Cell 7"), which breaks as soon as a learner
inserts a cell; this plugin records each cell's id, tags and ``eoslab`` metadata
with its outcome, so graded cells are found by what they are, not where they are.
Timeouts and the xfails nbval marks after a timeout are recorded as such (and
count as failed).

The outcomes are the grader's, not the notebook's: the file's path is taken out of the
environment before nbval starts the kernel (which inherits it), and the rows are kept here and
written once, at the end of the session, over anything else that wrote there meanwhile.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

OUTCOMES_ENV = "EOSLAB_GRADE_OUTCOMES"

_OUT: dict[str, Any] = {"path": None, "rows": [], "guards": {}}


def pytest_configure(config: Any) -> None:
    _OUT["path"] = os.environ.pop(OUTCOMES_ENV, None)  # before any kernel starts: a learner's cell never sees it
    _OUT["rows"] = []


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    if _OUT["path"]:
        with open(_OUT["path"], "w") as fh:
            fh.writelines(json.dumps(row) + "\n" for row in _OUT["rows"])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Any:
    """The cell's nbval limit is its guard (:func:`eoslab._timeouts.cell_guard`: the grader's limit, or four times
    the solution cell's measured time when that is longer)."""
    from eoslab._timeouts import nbval_cell_guard

    with nbval_cell_guard(item) as guard:
        if guard is not None:
            _OUT["guards"][item.nodeid] = guard
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    cell = getattr(item, "cell", None)
    if cell is None or _OUT["path"] is None:
        return
    if report.when != "call" and not (report.when == "setup" and report.outcome != "passed"):
        return
    text = str(report.longrepr) if report.longrepr else ""
    row = {
        "nodeid": item.nodeid,
        "cell_id": cell.get("id"),
        "tags": list(cell.get("metadata", {}).get("tags", [])),
        "eoslab": cell.get("metadata", {}).get("eoslab", {}),
        "outcome": report.outcome,
        "xfail": bool(getattr(report, "wasxfail", "")),
        "timeout": "Timeout of" in text,
        "guard": _OUT["guards"].get(item.nodeid),
        "duration": round(report.duration, 2),
        "error_tail": text.strip().splitlines()[-1][:400] if text.strip() else "",
    }
    _OUT["rows"].append(row)
