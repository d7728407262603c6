"""The house's size limits as a test: no function of the package above cyclomatic complexity 12 (radon's
measure) or 60 lines, no module above 400 lines, and few functions above complexity 10 (under 2.5 % of them).
A function past them is a place where a reader loses the thread and a change breaks what it did not mean to;
make it simpler (a table instead of an if-chain, early returns, one job per function, named predicates), not
just shorter."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "eoslab"
MAX_COMPLEXITY = 12
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 400
BUSY_COMPLEXITY = 10
MAX_BUSY_SHARE = 0.025  # of the package's functions, those above BUSY_COMPLEXITY

pytestmark = pytest.mark.lint


def _functions(source: str) -> Iterator[Function]:
    """Every function of ``source`` once: top-level ones, methods (of nested classes too) and closures.

    radon's ``cc_visit`` lists a class's methods both after the class and inside it (``Class.methods``):
    methods are taken from their class only."""

    def walk(blocks: list[Function | Class]) -> Iterator[Function]:
        for block in blocks:
            if isinstance(block, Class):
                yield from walk([*block.methods, *block.inner_classes])
            else:
                yield block
                yield from walk(block.closures)

    yield from walk([b for b in cc_visit(source) if isinstance(b, Class) or not b.is_method])


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "_java" not in p.relative_to(PACKAGE).parts)


def _measured() -> list[tuple[str, Function]]:
    return [
        (f"{path.relative_to(ROOT)}:{f.lineno} {f.name}", f)
        for path in _sources()
        for f in _functions(path.read_text())
    ]


def _busy_share(functions: list[Function]) -> tuple[int, float]:
    busy = sum(1 for f in functions if f.complexity > BUSY_COMPLEXITY)
    return busy, busy / max(len(functions), 1)


def test_no_function_is_too_complex_or_too_long() -> None:
    found = []
    for where, f in _measured():
        lines = f.endline - f.lineno + 1
        if f.complexity > MAX_COMPLEXITY or lines > MAX_FUNCTION_LINES:
            found.append(f"{where}: complexity {f.complexity}, {lines} lines")
    assert not found, f"over the house's limits ({MAX_COMPLEXITY}, {MAX_FUNCTION_LINES} lines):\n" + "\n".join(found)


def test_few_functions_are_above_complexity_10() -> None:
    measured = _measured()
    busy, share = _busy_share([f for _, f in measured])
    listed = "\n".join(f"{where}: {f.complexity}" for where, f in measured if f.complexity > BUSY_COMPLEXITY)
    assert share < MAX_BUSY_SHARE, (
        f"{busy} of {len(measured)} functions ({share:.1%}) are above complexity {BUSY_COMPLEXITY}, the house "
        f"keeps it under {MAX_BUSY_SHARE:.1%}: simplify some of them:\n{listed}"
    )


def test_no_module_is_too_long() -> None:
    long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in _sources()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split by what each part owns):\n" + "\n".join(long)


def test_the_measure_sees_a_complex_function() -> None:
    """The check can fail: a function of 13 branches is found."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(MAX_COMPLEXITY))
    (f,) = list(_functions(f"def f(x):\n{body}    return -1\n"))
    assert f.complexity == MAX_COMPLEXITY + 1 and f.endline - f.lineno + 1 == 2 * MAX_COMPLEXITY + 2


def test_each_function_counts_once() -> None:
    """The share's count: a top-level function, a method, a closure in it and a nested class's method are four
    functions, each once (radon lists a class's methods twice); the class itself is none."""
    source = (
        "def top():\n    return 1\n"
        "class A:\n"
        "    def method(self):\n        def closure():\n            return 2\n        return closure()\n"
        "    class B:\n        def inner(self):\n            return 3\n"
    )
    assert sorted(f.name for f in _functions(source)) == ["closure", "inner", "method", "top"]


def test_the_share_sees_busy_functions() -> None:
    """The share can fail: one function above complexity 10 in 20 is 5 %."""
    busy = "def busy(x):\n" + "".join(f"    if x == {i}:\n        return {i}\n" for i in range(BUSY_COMPLEXITY))
    calm = "".join(f"def calm{i}():\n    return {i}\n" for i in range(19))
    count, share = _busy_share(list(_functions(busy + "    return -1\n" + calm)))
    assert (count, share) == (1, 0.05) and share >= MAX_BUSY_SHARE
