"""Result lists that turn into pandas DataFrames.

Every inspection returns plain dataclasses (easy to assert on in tests, easy
to print) in a :class:`Rows` list, so a notebook can write ``.to_frame()`` and
get a table with one column per field, in declaration order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pandas is imported lazily: a parser test should not pay for it
    import pandas as pd

T = TypeVar("T")

_HIDDEN = {"records"}
"""Nested lists that do not fit a cell; reach them through the objects (``batch.records``)."""


def _row(item: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        row = {f.name: getattr(item, f.name) for f in dataclasses.fields(item) if f.name not in _HIDDEN}
        # Read-only properties that teach something (e.g. a PID block's last id) join the columns.
        for name in getattr(type(item), "FRAME_EXTRAS", ()):
            row[name] = getattr(item, name)
        return row
    if isinstance(item, dict):
        return dict(item)
    raise TypeError(f"Cannot turn {type(item).__name__} into a DataFrame row: pass dataclasses or dicts.")


def frame(items: Iterable[Any], columns: list[str] | None = None) -> pd.DataFrame:
    """A DataFrame from dataclasses (or dicts): one row per item, one column per field.

    ``columns`` fixes the columns of an empty result, so a notebook's
    ``df[df.is_control]`` works even when nothing matched.
    """
    import pandas as pd

    rows = [_row(i) for i in items]
    if not rows and columns is not None:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame(rows)


class Rows(list[T]):
    """A list of results with :meth:`to_frame`."""

    row_type: type | None = None

    def __init__(self, items: Iterable[T] = (), row_type: type | None = None) -> None:
        super().__init__(items)
        self.row_type = row_type

    def to_frame(self) -> pd.DataFrame:
        cols = None
        if self.row_type is not None and dataclasses.is_dataclass(self.row_type):
            cols = [f.name for f in dataclasses.fields(self.row_type) if f.name not in _HIDDEN]
            cols += list(getattr(self.row_type, "FRAME_EXTRAS", ()))
        return frame(self, cols)
