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
    if _in_kernel():
        return True
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _in_kernel() -> bool:
    """True inside a Jupyter kernel. Importing ipykernel is not enough: pytest with nbval imports it
    to drive notebooks, and its own output is a pipe."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def advance(bar: Any, by: float) -> None:
    """Move ``bar`` on by ``by``, growing its total when the work outlasts its estimate (tqdm warns
    "clamping frac to range [0, 1]" on a bar past its total)."""
    if bar.total is not None and bar.n + by > bar.total:
        bar.total = bar.n + by
    bar.update(by)


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
