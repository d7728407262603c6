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

# Recorded outputs and sample notebooks used BY tests; nbval must not run them as tests.
collect_ignore = ["data"]


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
    eoslab.heal(cluster)
    yield cluster
    eoslab.heal(cluster)


@pytest.fixture
def topic_name(request):
    """A fresh topic name per test, so tests are re-runnable on a long-lived cluster."""
    return f"t-{request.node.name[:40].replace('[', '-').replace(']', '')}-{uuid.uuid4().hex[:8]}"
