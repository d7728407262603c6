"""One wait for everything, and a timeout that explains itself."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from eoslab.errors import WaitTimeout

T = TypeVar("T")

INTERVAL = 0.25
"""Between probes: a Kafka state change (an election, an ISR change) takes ~100 ms or more."""

_BAR = "{desc} {bar:20} {n:.0f} s (gives up after {total:.0f} s)"


def wait_until(
    probe: Callable[[], T],
    *,
    timeout: float,
    what: str,
    interval: float = INTERVAL,
    hint: str = "",
    describe: Callable[[], str] | None = None,
    fatal: tuple[type[BaseException], ...] = (),
    progress: bool = True,
) -> T:
    """Call ``probe`` until it returns something truthy, and return that.

    ``probe`` may raise: the exception counts as "not yet" and its text becomes
    the last state seen, unless it is one of ``fatal``, which end the wait at once.
    On timeout, :class:`WaitTimeout` says what was awaited, for how long, the last
    thing seen, ``describe()`` (e.g. a log tail) and a hint.
    A wait that lasts more than a few seconds shows a bar: what it waits for, the
    seconds so far, and the timeout (``progress=False`` for waits nobody watches).
    """
    from eoslab._progress import progress_bar

    start = time.monotonic()
    bar = progress_bar(f"waiting for {what}"[:70], total=timeout, unit="s", bar_format=_BAR) if progress else None
    try:
        return _poll(probe, start, timeout, what, interval, hint, describe, fatal, bar)
    finally:
        if bar is not None:
            bar.close()


def _poll(
    probe: Callable[[], T],
    start: float,
    timeout: float,
    what: str,
    interval: float,
    hint: str,
    describe: Callable[[], str] | None,
    fatal: tuple[type[BaseException], ...],
    bar: Any,
) -> T:
    deadline = start + timeout
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
        if bar is not None:
            bar.update(min(time.monotonic() - start, timeout) - bar.n)
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
