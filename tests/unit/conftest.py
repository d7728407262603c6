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
