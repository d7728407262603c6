"""Hooks for every test the suite collects, notebooks included (nbval items live outside tests/)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

import pytest

# Module 06's notebooks (and its lab) analyse bench runs: the session measures ONE quick matrix
# and shares it through $EOSLAB_RUNS, which nbval's kernels inherit (a matrix per notebook would
# cost minutes of CI).
_RUNS_NOTEBOOKS = ("06_cost_of_exactly_once.ipynb", "lab06_cost.ipynb")


def shared_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runs folder shared by the whole test session: ``$EOSLAB_RUNS`` if set, else one quick matrix
    measured now into a temporary folder and exported as ``$EOSLAB_RUNS`` (nbval kernels inherit it)."""
    from eoslab.bench.producers import ensure_runs
    from eoslab.cluster import Cluster
    from eoslab.runs import RUNS_ENV

    if RUNS_ENV not in os.environ:
        root = tmp_path_factory.mktemp("bench") / "runs"
        ensure_runs(Cluster().up(), root, "quick")
        os.environ[RUNS_ENV] = str(root)
    return Path(os.environ[RUNS_ENV])


# Module 05's notebook (and the fault matrix tests) read ONE fault matrix run of this session, written
# into the same shared runs folder: the matrix costs minutes, once.
_FAULTS_NOTEBOOKS = ("05_exactly_once_pipeline.ipynb",)
_FAULT_RUN: list[Path] = []


def shared_fault_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fault matrix run of this test session (measured on first use, at the smallest size, into the
    shared runs folder, where notebook 05 finds it)."""
    if not _FAULT_RUN:
        from eoslab.bench.faults import run_faults
        from eoslab.cluster import Cluster
        from eoslab.demos.pipeline import MIN_RECORDS
        from eoslab.runs import RUNS_ENV

        if RUNS_ENV not in os.environ:
            os.environ[RUNS_ENV] = str(tmp_path_factory.mktemp("bench") / "runs")
        folder, _ = run_faults(Cluster().up(), records=MIN_RECORDS, root=os.environ[RUNS_ENV], progress=False)
        _FAULT_RUN.append(folder)
    return _FAULT_RUN[0]


@pytest.fixture(scope="session")
def fault_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This session's fault matrix run folder (``runs/faults-<id>``), shared with notebook 05."""
    return shared_fault_run(tmp_path_factory)


@pytest.fixture(scope="session")
def bench_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One quick-matrix run on the real cluster, in a temporary runs folder (also $EOSLAB_RUNS), shared
    with notebook 06, its solution and its lab."""
    from eoslab.runs import run_folders

    root = shared_runs(tmp_path_factory)
    assert run_folders(root)
    return root


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Notebooks heal the cluster themselves (their setup cell); run them after the unit and
    # cluster tests so a failing notebook cannot hide a failing foundation test. Tests marked
    # `last` (the lifecycle test stops and restarts the whole cluster) run after all the others
    # of tests/ and before the notebooks. The docker tests come after everything: their cluster
    # (a session fixture) then starts late and never runs idle beside the local notebooks.
    # The sort is stable: file order holds otherwise.
    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("docker") is not None:
            return 3
        if item.nodeid.endswith(".ipynb") or ".ipynb::" in item.nodeid:
            return 2
        return 1 if item.get_closest_marker("last") else 0

    items.sort(key=rank)


def _tmp_path_factory(item: pytest.Item) -> pytest.TempPathFactory:
    """The session's tmp_path_factory, outside a fixture (pytest's tmp_path plugin keeps it on the config)."""
    factory: pytest.TempPathFactory = cast(Any, item.config)._tmp_path_factory
    return factory


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Heal before each notebook (nbval item of its first cell), so no lesson leaks into the next."""
    if ".ipynb::" in item.nodeid and item.nodeid.endswith("::Cell 0"):
        import eoslab

        if item.path.name in _RUNS_NOTEBOOKS:
            shared_runs(_tmp_path_factory(item))
        if item.path.name in _FAULTS_NOTEBOOKS:
            shared_fault_run(_tmp_path_factory(item))
        eoslab.heal(eoslab.Cluster())  # the backend of $EOSLAB_BACKEND, as the notebooks use
