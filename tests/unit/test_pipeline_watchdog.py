"""The processor's watchdog around send_offsets_to_transaction: a call that overruns its timeout by the grace
exits the process with EXIT_STUCK and one line naming the call; a call that returns or raises disarms it."""

from __future__ import annotations

import io
import threading
import time

import pytest

from eoslab.demos.pipeline._watchdog import EXIT_STUCK, GRACE, SEND_OFFSETS_TIMEOUT, Watchdog


def _dog() -> tuple[Watchdog, list[int], io.StringIO, threading.Event]:
    exits: list[int] = []
    fired = threading.Event()
    err = io.StringIO()

    def exit(code: int) -> None:
        exits.append(code)
        fired.set()

    return Watchdog("proc-1", exit=exit, err=err), exits, err, fired


def test_a_call_stuck_past_its_timeout_and_the_grace_exits_with_one_line_naming_it() -> None:
    dog, exits, err, fired = _dog()
    with dog.guard("send_offsets_to_transaction", timeout=0.05, grace=0.05):
        assert fired.wait(5), "the watchdog never fired"
    assert exits == [EXIT_STUCK]
    line = err.getvalue()
    assert line.count("\n") == 1 and line.startswith("proc-1: send_offsets_to_transaction did not return 0.05 s")
    assert "#5511" in line and "#5456" in line and "restarts it" in line


def test_a_call_that_returns_or_raises_in_time_disarms_it() -> None:
    dog, exits, err, _ = _dog()
    with dog.guard("send_offsets_to_transaction", timeout=0.1, grace=0.1):
        pass
    with pytest.raises(RuntimeError), dog.guard("send_offsets_to_transaction", timeout=0.1, grace=0.1):
        raise RuntimeError("_TIMED_OUT")
    time.sleep(0.4)  # twice past both deadlines
    assert exits == [] and err.getvalue() == ""
    assert [t for t in threading.enumerate() if isinstance(t, threading.Timer)] == []


def test_the_timeout_sits_between_a_coordinator_failover_and_the_transaction_timeout() -> None:
    from eoslab.demos.pipeline._child import TRANSACTION_TIMEOUT_MS

    assert 5.0 < SEND_OFFSETS_TIMEOUT < TRANSACTION_TIMEOUT_MS / 1000  # a 5 s broker session; librdkafka's cap
    assert SEND_OFFSETS_TIMEOUT + GRACE <= TRANSACTION_TIMEOUT_MS / 1000  # stuck is told before the txn times out
