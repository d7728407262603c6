"""The bench runs of module 06, built ONCE per session and shared with notebook 06, its solution and its lab."""

from __future__ import annotations

from pathlib import Path

import pytest

from eoslab.bench._record import run_folders
from eoslab.bench.producers import shared_runs


@pytest.fixture(scope="session")
def bench_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One quick-matrix run on the real cluster, in a temporary runs folder (also $EOSLAB_RUNS)."""
    root = shared_runs(lambda: tmp_path_factory.mktemp("bench"))
    assert run_folders(root)
    return root


@pytest.fixture(scope="module")
def proxy(cluster):
    """The running fault proxy of the session's cluster; every rule a module added is cleared after it."""
    from eoslab.faults import Proxy, ensure_proxy

    ensure_proxy(cluster)
    p = Proxy(cluster.topology)
    yield p
    p.clear_rules()
