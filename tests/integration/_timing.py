"""Timing in tests on a shared 2-core machine: an upper bound scales with a baseline measured in the
same test, under the same load.

How the suite bounds time (docs/reliability.md, "How the suite keeps time honest", says why):

- a LOWER bound that comes from configuration (a delay a rule injects, a client's timeout) stays as it
  is: a slow machine cannot break it;
- a claim about cause ("closed because the broker died, not because a timeout ran out") is asserted as
  the cause: an ordering, a trace row, the exception's type;
- an UPPER bound ("at once", "soon after") is ``SLACK`` times the SLOWEST of a few comparable operations
  (round trips through the same path) measured in the same test: on a loaded machine the baseline, and
  so the bound, grows with the load.
"""

from __future__ import annotations

import time
from collections.abc import Callable

SLACK = 10
"""An "at once" event takes at most this many of the slowest baseline round trips. The event does less
work than one round trip (a relayed close vs a request through the proxy AND the broker), so 10 is
generous; a stall that long is a stall, not load."""


def slowest(operation: Callable[[], object], samples: int = 5) -> float:
    """The slowest of ``samples`` runs of ``operation``, in seconds (the baseline)."""
    worst = 0.0
    for _ in range(samples):
        t0 = time.monotonic()
        operation()
        worst = max(worst, time.monotonic() - t0)
    return worst
