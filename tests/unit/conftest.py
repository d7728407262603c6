"""Fixtures for tests that need no cluster."""

from __future__ import annotations

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


def pytest_collection_modifyitems(config, items):
    """A test that needs a Spark session (fixture ``spark``, directly or through another fixture)
    starts a JVM: marked ``jvm``, so `make unit` can leave it out and stay in seconds."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.jvm)
