"""How long each xdist scope of the cluster, course and system tiers takes: the scheduler hands the longest first
(conftest.py ``_next_scope``), so that the tier does not end on one worker running a long scope the others could
not share (run 75: the course tier's last worker finished 54-58 s after the other two; run 111: the cluster tier's
last worker 122-142 s after the others, three files missing from the table taken last at 10 s each).

The table (``scope_seconds.json``) is made from the seconds of every item of a `make test` run, which the timeline
plugin writes when ``EOSLAB_ITEM_SECONDS`` names a file (tests/timeline_plugin.py)::

    EOSLAB_ITEM_SECONDS=/tmp/items.json make test; .venv/bin/python -m tests.scope_seconds /tmp/items.json

A log of pytest's ``--durations`` lines is read too (items under its ``--durations-min`` are then missing). A scope
not in the table counts :data:`UNKNOWN` seconds; tests/unit/test_suite_tiers.py checks that every file of the two
tiers has a scope in it. The figures only order the scopes; they are not asserted anywhere.

The system tier's files (marked ``docker`` or ``workshop``) are left out: its workers' layout is explicit
(conftest.py's PINNED and LEFT_TO_OTHERS) and its scopes keep xdist's queue order among themselves. Ordered by
length, the worker that took the lab container took the offline install too as its second scope (xdist hands each
worker two at the start) and the other sat idle 134 s (run 76).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path
from types import ModuleType

TABLE = Path(__file__).with_name("scope_seconds.json")
UNKNOWN = 10.0
"""Seconds a scope missing from the table counts (a short integration test's order of magnitude)."""
_MARK = re.compile(r"\bmark\.(\w+)")
_LINE = re.compile(r"(?P<seconds>\d+(?:\.\d+)?)s\s+(?:call|setup|teardown)\s+(?P<nodeid>\S.*?)\s*$")


def from_items(items: dict[str, float], suite: ModuleType | None = None) -> dict[str, float]:
    """Seconds per xdist scope from seconds per item (node id): the cluster and course tiers only. ``suite`` is
    the root conftest.py (imported when not given): its ``xdist_scope`` and its tier rule ``tier_of``."""
    if suite is None:
        import conftest  # the root conftest.py, run from the repository as the docstring says

        suite = conftest
    tier = functools.cache(lambda path: suite.tier_of(path, _marks(path)))  # each file read once
    seconds: dict[str, float] = {}
    for nodeid, spent in items.items():
        if tier(nodeid.split("::", 1)[0]) in ("cluster", "course"):
            scope = suite.xdist_scope(nodeid)
            seconds[scope] = round(seconds.get(scope, 0.0) + spent, 1)
    return dict(sorted(seconds.items()))


def from_durations(text: str, suite: ModuleType | None = None) -> dict[str, float]:
    """Seconds per xdist scope from pytest's ``--durations`` lines (setup, call and teardown added up)."""
    items: dict[str, float] = {}
    for m in filter(None, map(_LINE.search, text.splitlines())):
        items[m["nodeid"]] = items.get(m["nodeid"], 0.0) + float(m["seconds"])
    return from_items(items, suite)


def scope_files(table: dict[str, float]) -> set[str]:
    """The files the scopes of ``table`` belong to."""
    return {scope.split("::", 1)[0] for scope in table}


def _marks(path: str) -> set[str]:
    """The marks the file ``path`` (relative to the repository) names in its text (``pytest.mark.docker`` …)."""
    try:
        return set(_MARK.findall((TABLE.parents[1] / path).read_text(errors="replace")))
    except OSError:
        return set()


@functools.cache
def load() -> dict[str, float]:
    """The table, read once per process (the xdist controller asks at every scheduling decision)."""
    try:
        return {k: float(v) for k, v in json.loads(TABLE.read_text())["seconds"].items()}
    except (OSError, ValueError, KeyError):
        return {}


def main(paths: list[str]) -> None:
    """Write the table from item-seconds files (``*.json``, the timeline plugin's) or ``--durations`` logs."""
    seconds: dict[str, float] = {}
    for path in map(Path, paths):
        text = path.read_text(errors="replace")
        seconds.update(from_items(json.loads(text)) if path.suffix == ".json" else from_durations(text))
    about = "Seconds per xdist scope, longest handed out first (tests/scope_seconds.py says how to refresh it)."
    TABLE.write_text(json.dumps({"about": about, "seconds": dict(sorted(seconds.items()))}, indent=1) + "\n")
    print(f"{TABLE}: {len(seconds)} scopes, {sum(seconds.values()):.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
