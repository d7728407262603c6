"""Progress bars on the waits a learner sits through (tqdm), shown only when a wait lasts.

One place decides how they look: on stdout (a notebook shows stderr as a pink error-like box),
shown only after ``delay`` seconds (a quick wait prints nothing), and gone when done (a lesson's
output keeps the results, not the bars). ``EOSLAB_PROGRESS=0`` turns them off; a pipe
(a CI log) gets none.
"""

from __future__ import annotations

import os
import sys
from typing import Any

DELAY = 3.0
"""Seconds before a bar appears: shorter waits are not worth a line."""


def _shown() -> bool:
    """Bars where someone watches: a terminal or a notebook kernel; not a pipe or a CI log, where each
    redraw would only add a line of carriage returns."""
    if os.environ.get("EOSLAB_PROGRESS", "1") == "0":
        return False
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def progress_bar(
    desc: str, *, total: float | None = None, unit: str = "it", delay: float | None = None, **kw: Any
) -> Any:
    """A ``tqdm`` bar (a disabled one under ``EOSLAB_PROGRESS=0``)."""
    from tqdm import tqdm

    return tqdm(
        desc=desc,
        total=total,
        unit=unit,
        delay=DELAY if delay is None else delay,
        leave=False,
        file=sys.stdout,
        dynamic_ncols=True,
        mininterval=0.5,
        disable=not _shown(),
        **kw,
    )
