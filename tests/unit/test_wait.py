import pytest

from eoslab._wait import wait_until
from eoslab.errors import WaitTimeout


def test_returns_the_first_truthy_value():
    seen = iter([0, None, 7])
    assert wait_until(lambda: next(seen), timeout=5, what="x", interval=0.01) == 7


def test_timeout_says_what_it_waited_for_and_the_last_state():
    def probe():
        raise ConnectionError("broker 2 refused")

    with pytest.raises(WaitTimeout) as err:
        wait_until(
            probe,
            timeout=0.05,
            what="broker 2",
            interval=0.01,
            hint="Try `eoslab logs broker-2`.",
            describe=lambda: "log tail here",
        )
    text = str(err.value)
    assert "waiting for broker 2" in text and "broker 2 refused" in text
    assert "log tail here" in text and "eoslab logs broker-2" in text


def test_a_fatal_exception_ends_the_wait_at_once():
    calls = []

    def probe():
        calls.append(1)
        raise PermissionError("no retry cures this")

    with pytest.raises(PermissionError):
        wait_until(probe, timeout=5, what="x", interval=0.01, fatal=(PermissionError,))
    assert calls == [1]
