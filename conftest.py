"""Hooks for every test the suite collects, notebooks included (nbval items live outside tests/)."""

from __future__ import annotations

import pytest

# Module 06's notebooks (and its lab) analyse bench runs: the session measures ONE quick matrix
# and shares it through $EOSLAB_RUNS, which nbval's kernels inherit (a matrix per notebook would
# cost minutes of CI).
_RUNS_NOTEBOOKS = ("06_cost_of_exactly_once.ipynb", "lab06_cost.ipynb")


def _order(item) -> int:
    if item.get_closest_marker("docker") is not None:
        return 2
    return 1 if item.nodeid.endswith(".ipynb") or ".ipynb::" in item.nodeid else 0


def pytest_collection_modifyitems(config, items):
    # Notebooks heal the cluster themselves (their setup cell); run them after the unit and
    # cluster tests so a failing notebook cannot hide a failing foundation test. The docker tests
    # come last: their cluster (a session fixture) then starts late and never runs idle beside
    # the local notebooks.
    items.sort(key=_order)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """heal() before each notebook (nbval item of its first cell), so no lesson leaks into the next."""
    if ".ipynb::" in item.nodeid and item.nodeid.endswith("::Cell 0"):
        from eoslab.cluster import Cluster

        if item.path.name in _RUNS_NOTEBOOKS:
            from eoslab.bench.producers import shared_runs

            shared_runs(lambda: item.config._tmp_path_factory.mktemp("bench"))
        Cluster().heal()  # the backend of $EOSLAB_BACKEND, as the notebooks use
