"""The tab-separated tables that ``kafka-transactions.sh`` prints.

TransactionsCommand pads each cell and separates cells by a tab, with a tab
after the last one: header row first, then one row per item.
"""

from __future__ import annotations


def parse_tsv(text: str) -> list[dict[str, str]]:
    """Rows as dicts keyed by the header's column names (cells stripped)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header = [c.strip() for c in lines[0].split("\t")]
    while header and not header[-1]:
        header.pop()
    rows = []
    for ln in lines[1:]:
        cells = [c.strip() for c in ln.split("\t")]
        cells += [""] * (len(header) - len(cells))
        rows.append(dict(zip(header, cells, strict=False)))
    return rows


def opt_int(text: str) -> int | None:
    """``None`` (and an empty cell) become None; numbers become ints."""
    return None if text in ("", "None", "null") else int(text)
