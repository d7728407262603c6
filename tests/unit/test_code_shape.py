"""The house's size limits as a test: no function of the package above cyclomatic complexity 15 (radon's
measure) or 60 lines, no module above 400 lines. A function past them is a place where a reader loses the
thread and a change breaks what it did not mean to; split it by what each part owns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "eoslab"
MAX_COMPLEXITY = 15
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400

pytestmark = pytest.mark.lint


def _functions(blocks: list[Function | Class]) -> Iterator[Function]:
    for block in blocks:
        if isinstance(block, Class):
            yield from _functions(block.methods)
        else:
            yield block
            yield from _functions(block.closures)


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_java" not in p.relative_to(PACKAGE).parts)


def test_no_function_is_too_complex_or_too_long() -> None:
    found = []
    for path in _sources():
        for f in _functions(cc_visit(path.read_text())):
            lines = f.endline - f.lineno + 1
            if f.complexity > MAX_COMPLEXITY or lines > MAX_FUNCTION_LINES:
                found.append(f"{path.relative_to(ROOT)}:{f.lineno} {f.name}: complexity {f.complexity}, {lines} lines")
    assert not found, "over the house's limits (15, 60 lines):\n" + "\n".join(found)


def test_no_module_is_too_long() -> None:
    long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in _sources()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split by what each part owns):\n" + "\n".join(long)


def test_the_measure_sees_a_complex_function() -> None:
    """The check can fail: a function of 16 branches is found."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(16))
    (f,) = list(_functions(cc_visit(f"def f(x):\n{body}    return -1\n")))
    assert f.complexity == 17 and f.endline - f.lineno + 1 == 34
