"""Shared fixtures: ONE real cluster for the whole session, healed around every fault.

No mock Kafka anywhere: a test that needs Kafka gets the local backend's six
JVMs (started here if `make test` did not already start them).
"""

from __future__ import annotations

import os
import uuid

import pytest

import eoslab
from eoslab.cluster import Cluster


@pytest.fixture(scope="session")
def cluster():
    """The running local cluster; started (and stopped at the end) if it was not running."""
    c = Cluster("local")
    started_here = not c.is_up()
    c.up()
    yield c
    if started_here and not os.environ.get("EOSLAB_KEEP_CLUSTER"):
        c.down()


@pytest.fixture
def healed(cluster):
    """For tests that kill, stop or pause nodes: heal before and after, whatever happens."""
    cluster.heal()
    yield cluster
    cluster.heal()


@pytest.fixture
def topic_name(request):
    """A fresh topic name per test, so tests are re-runnable on a long-lived cluster."""
    return f"t-{request.node.name[:40].replace('[', '-').replace(']', '')}-{uuid.uuid4().hex[:8]}"


def pytest_collection_modifyitems(config, items):
    # Notebooks heal the cluster themselves (their setup cell); run them after the unit and
    # cluster tests so a failing notebook cannot hide a failing foundation test.
    items.sort(key=lambda it: 1 if it.nodeid.endswith(".ipynb") or ".ipynb::" in it.nodeid else 0)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """heal() before each notebook (nbval item of its first cell), so no lesson leaks into the next."""
    if ".ipynb::" in item.nodeid and item.nodeid.endswith("::Cell 0"):
        Cluster("local").heal()


assert eoslab.KAFKA_VERSION.startswith("4.")
