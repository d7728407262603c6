"""Hooks for every test the suite collects, notebooks included (nbval items live outside tests/)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    # Notebooks heal the cluster themselves (their setup cell); run them after the unit and
    # cluster tests so a failing notebook cannot hide a failing foundation test.
    items.sort(key=lambda it: 1 if it.nodeid.endswith(".ipynb") or ".ipynb::" in it.nodeid else 0)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """heal() before each notebook (nbval item of its first cell), so no lesson leaks into the next."""
    if ".ipynb::" in item.nodeid and item.nodeid.endswith("::Cell 0"):
        from eoslab.cluster import Cluster

        Cluster().heal()  # the backend of $EOSLAB_BACKEND, as the notebooks use


