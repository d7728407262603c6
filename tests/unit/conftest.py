"""Fixtures for tests that need no cluster."""

from __future__ import annotations

import os

import _early
import pytest

from eoslab import protocol


@pytest.fixture(scope="session")
def schemas() -> protocol.Schemas:
    """Kafka's message schemas from the pinned kafka-clients jar (`make setup` resolves it).

    A missing jar fails these tests with the sentence that says what to do: a skip would
    count a codec nobody tested as green.
    """
    try:
        return protocol.default_schemas()
    except protocol.JarNotFoundError as exc:
        pytest.fail(str(exc))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test that needs a Spark session (fixture ``spark``, directly or through another fixture)
    starts a JVM: marked ``jvm``, so `make unit` can leave it out and stay in seconds.

    A test with an early child (_early.py) runs after the others: its child then runs beside them. First
    of the hooks (tryfirst), so that the root conftest's sort by tier, which is stable, keeps that order
    within the unit tier."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.jvm)
    items.sort(key=_early.has_child)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the early children of the selected tests (_early.py). Not in a pytest-xdist worker (each would
    start every test's child, its own and the other worker's), nor when nothing will run: each test then
    starts its own child when it runs (:func:`early_child`)."""
    if session.config.option.collectonly or session.testsfailed or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for item in session.items:
        if _early.has_child(item):
            _early.start(item, session.config._tmp_path_factory)  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session) -> None:
    _early.kill_all()


@pytest.fixture
def early_child(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> _early.Started:
    """This test's child, started at collection (or now, when it was not)."""
    return _early.start(request.node, tmp_path_factory)
