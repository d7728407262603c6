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


@pytest.fixture(autouse=True, scope="module")
def no_child_left():
    """After each module: no processor, zombie or Java child the kit started is still running. One that
    outlived its experiment or test (a failure midway that skipped its stop) is killed here and named."""
    import psutil

    from eoslab import _procs

    def named(p: psutil.Process) -> str:
        try:
            return f"{p.pid} ({' '.join(p.cmdline()[:6])})"
        except psutil.Error:  # it ended between the two looks: still a child that outlived its test
            return str(p.pid)

    yield
    left = [named(p) for p in _procs.adopted()]
    _procs.end_adopted()
    assert not left, f"children of the kit outlived their test: {left}"
