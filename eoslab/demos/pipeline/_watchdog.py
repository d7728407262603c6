"""A deadline around the one librdkafka call of the processor that can wait forever.

``send_offsets_to_transaction`` waits for its result with no timeout of its own (librdkafka 2.x,
``rd_kafka_send_offsets_to_transaction``: ``RD_POLL_INFINITE``); the timeout it is given is checked only when
a response arrives. Its group-coordinator lookup stores a timeout that nothing reads (librdkafka issue #5456),
and when the group coordinator it has cached was killed and then dropped from the cluster's metadata, nothing
runs that lookup again (librdkafka issue #5511): the call never returns. A processor stuck there makes no progress
and says nothing. The watchdog turns that into an exit with one line naming the call: a supervisor restarts the
process, and exactly-once makes the restart safe (the new incarnation's ``init_transactions`` fences the old
one and aborts its open transaction). A call that returns or raises, in time or late, cancels it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

EXIT_STUCK = 5
"""A librdkafka call did not return GRACE seconds after its own timeout: the process exits to be restarted."""

GRACE = 5.0
"""Past a call's timeout, how long the watchdog lets it run: librdkafka answers a call that timed out within
about 0.5 s of its deadline; a call still blocked 5 s later waits on something that will not come."""

SEND_OFFSETS_TIMEOUT = 10.0
"""``send_offsets_to_transaction``'s timeout: above a transaction coordinator's failover (a 5 s broker session,
then the election), below the 20 s transaction timeout that librdkafka would cap it to."""


class Watchdog:
    """Exits the process (``exit(EXIT_STUCK)``, one line on ``err``) when a guarded call overruns."""

    def __init__(self, process: str, exit: Callable[[int], object] = os._exit, err: TextIO | None = None) -> None:
        self.process = process
        self._exit = exit
        self._err = err

    @contextmanager
    def guard(self, call: str, timeout: float, grace: float = GRACE) -> Iterator[None]:
        """Around one call given ``timeout``: past ``timeout + grace`` it is stuck, and the process exits."""
        timer = threading.Timer(timeout + grace, self._fire, args=(call, timeout, grace))
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _fire(self, call: str, timeout: float, grace: float) -> None:
        err = self._err or sys.stderr
        print(
            f"{self.process}: {call} did not return {grace:g} s after its {timeout:g} s timeout (known cause: "
            "librdkafka issues #5511 and #5456: its group-coordinator lookup is never repeated); exiting so that a "
            "supervisor restarts it",
            file=err,
            flush=True,
        )
        self._exit(EXIT_STUCK)
