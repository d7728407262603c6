"""Fixtures of the cluster tests (the session's bench runs, `bench_runs`, live in the root conftest.py:
notebook 06 and its lab share them)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def proxy(cluster):
    """The running fault proxy of the session's cluster; every rule a module added is cleared after it."""
    from eoslab.faults import Proxy, ensure_proxy

    ensure_proxy(cluster)
    p = Proxy(cluster.topology)
    yield p
    p.clear_rules()
