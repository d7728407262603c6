"""One wait for everything, and a timeout that explains itself."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from eoslab.errors import WaitTimeout

T = TypeVar("T")

INTERVAL = 0.25
"""Between probes: a Kafka state change (an election, an ISR change) takes ~100 ms or more."""


def wait_until(
    probe: Callable[[], T],
    *,
    timeout: float,
    what: str,
    interval: float = INTERVAL,
    hint: str = "",
    describe: Callable[[], str] | None = None,
    fatal: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``probe`` until it returns something truthy, and return that.

    ``probe`` may raise: the exception counts as "not yet" and its text becomes
    the last state seen, unless it is one of ``fatal``, which end the wait at once.
    On timeout, :class:`WaitTimeout` says what was awaited, for how long, the last
    thing seen, ``describe()`` (e.g. a log tail) and a hint.
    """
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = probe()
            if value:
                return value
            last = value
        except fatal:
            raise
        except Exception as exc:  # noqa: BLE001 - the probe's failure is the state we report
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            parts = [f"Timed out after {timeout:g} s waiting for {what}; last seen: {last!r}."]
            if describe is not None:
                try:
                    parts.append(describe())
                except Exception:  # noqa: BLE001
                    pass
            if hint:
                parts.append(hint)
            raise WaitTimeout("\n".join(parts))
        time.sleep(interval)
