"""docs/versions.md: every version-dependent fact names at least one test, and every test it names exists (the file
under tests/, and the function where a ``::name`` is given)."""

from __future__ import annotations

import re
from pathlib import Path

from eoslab.topology import KAFKA_VERSION

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "versions.md"


def rows() -> list[list[str]]:
    table = [line for line in DOC.read_text().splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in table if not line.startswith("| fact ")]


def named_tests(cell: str) -> list[tuple[str, str | None]]:
    """``(file, function or None)`` for each backticked test in a cell; ``::name`` alone is of the file before it."""
    found, last = [], ""
    for token in re.findall(r"`([^`]+)`", cell):
        path, _, name = token.partition("::")
        if path.endswith(".py"):
            last = path
        elif path or not last:
            continue  # a config name or a file that is not a test
        found.append((last, name or None))
    return found


def test_every_row_names_a_test_that_exists() -> None:
    table = rows()
    assert len(table) >= 25 and all(len(r) == 4 for r in table), [r for r in table if len(r) != 4]
    for fact, _, checked, tests in table:
        names = named_tests(tests)
        assert names, f"no test named for: {fact}"
        for file, function in names:
            source = ROOT / "tests" / file
            assert source.is_file(), f"{file} (for: {fact[:60]}) does not exist"
            if function is not None:
                assert re.search(rf"^def {re.escape(function)}\(", source.read_text(), re.M), f"{file}::{function}"
        assert KAFKA_VERSION in checked or "4.1.2" in checked, checked


def test_the_page_names_the_pinned_release() -> None:
    assert f"**{KAFKA_VERSION}**" in DOC.read_text()
