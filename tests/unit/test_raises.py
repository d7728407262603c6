"""What the package raises, read from its source (an AST scan, no import).

A notebook or a script catches the kit's errors by family (``eoslab/errors.py`` draws the tree). Two
things would break that, and this file fails on each: a ``raise EoslabError(...)`` (the root says nothing
a caller could act on: raise the family's class), and a builtin exception (``RuntimeError``,
``ValueError`` ...) that reaches the caller. A builtin raise stays only where it is caught inside the
package or is a programming error, and each one is listed below with the reason.
"""

from __future__ import annotations

import ast
import builtins
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "eoslab"

BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
)

# (file, exception) -> (how many raises, why it may stay). A count that differs fails too: a new raise
# must be judged, and a raise that went away must leave the list.
ALLOWED: dict[tuple[str, str], tuple[int, str]] = {
    ("eoslab/_linechild.py", "NotImplementedError"): (1, "the abstract _pid_file every subclass defines"),
    ("eoslab/protocol/_wire.py", "TypeError"): (
        3,
        "a value of the wrong type for its field: the enclosing struct catches it (LOW_LEVEL_ERRORS) and "
        "raises a ProtocolError with the field's path",
    ),
    ("eoslab/protocol/_client.py", "ConnectionResetError"): (
        1,
        "the peer closed the socket: KafkaConnection._exchange turns every OSError into a KafkaConnectionError",
    ),
    ("eoslab/faults/_zombie_child.py", "ValueError"): (
        1,
        "a program, not the library: its command loop catches it and answers the parent with the error",
    ),
    ("eoslab/m07_production/_child.py", "SystemExit"): (
        2,
        "a program, not the library: SIGTERM ends the learner's program where it is, and a program file that "
        "cannot be imported ends the child; its main turns both into an exit code",
    ),
    ("eoslab/inspect/_table.py", "TypeError"): (1, "an argument of the wrong type (a programming error)"),
    ("eoslab/grading/lab06.py", "TypeError"): (
        1,
        "an answer of the wrong type, caught by @guarded around the same check: the task's verdict says it",
    ),
    ("eoslab/grading/lab06.py", "ValueError"): (
        1,
        "an answer still None, caught by @guarded around the same check: the task's verdict says it",
    ),
}

# Files another change is rewriting at the same time as this list was made; their raises move to the
# families when that change lands. The coordinator empties these three lists: do not add to them.
PENDING: dict[tuple[str, str], tuple[int, str]] = {}
PENDING_ROOT: dict[str, int] = {}

# Exception classes the package defines outside the tree, each caught where it is raised.
OWN_BUILTIN_CLASSES: dict[tuple[str, str], str] = {
    ("eoslab/errors.py", "EoslabError"): "the root of the tree",
    ("eoslab/protocol/_wire.py", "Malformed"): "a ValueError the codec's structs turn into a ProtocolError",
    ("eoslab/demos/pipeline/_child.py", "_Stop"): "the processor program's own exit, caught in its main loop",
    ("eoslab/grading/lab06.py", "_Wrong"): "a wrong answer, caught by the check that raises it (a CheckFailed)",
}


def _raised_name(node: ast.Raise) -> str | None:
    """The name of the class a ``raise`` names (``raise X``, ``raise X(...)``, ``raise mod.X(...)``)."""
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    if isinstance(exc, ast.Name):
        return exc.id
    if isinstance(exc, ast.Attribute):
        return exc.attr
    return None


def scan(source: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]], list[str]]:
    """In one module's source: raises of the root (line, name as written), raises of builtin exceptions
    (line, name), and classes that derive from builtin exceptions only."""
    tree = ast.parse(source)
    roots = {"EoslabError"} | {
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name == "EoslabError" and alias.asname
    }
    root_raises, builtin_raises, classes = [], [], []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            name = _raised_name(node)
            if name in roots:
                root_raises.append((node.lineno, name))
            elif name in BUILTIN_EXCEPTIONS:
                builtin_raises.append((node.lineno, name))
        elif isinstance(node, ast.ClassDef):
            bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
            if bases and any(b in BUILTIN_EXCEPTIONS for b in bases) and all(b in BUILTIN_EXCEPTIONS for b in bases):
                classes.append(node.name)
    return root_raises, builtin_raises, classes


def _sources() -> dict[str, str]:
    return {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted(PACKAGE.rglob("*.py"))}


SOURCES = _sources()
SCANS = {path: scan(text) for path, text in SOURCES.items()}


def test_the_scan_sees_each_kind_of_raise():
    """The scanner itself: a scan that found nothing would pass everything below."""
    roots, builtin, classes = scan(
        "from eoslab.errors import EoslabError as E\n"
        "import eoslab\n"
        "class Bad(ValueError): pass\n"
        "class Good(eoslab.ClusterError, KeyError): pass\n"
        "def f(x):\n"
        "    if x: raise E('a')\n"
        "    if x: raise eoslab.EoslabError('b')\n"
        "    if x: raise RuntimeError('c')\n"
        "    if x: raise KeyError\n"
        "    if x: raise eoslab.ClusterError('fine')\n"
        "    raise\n"
    )
    assert roots == [(6, "E"), (7, "EoslabError")]
    assert builtin == [(8, "RuntimeError"), (9, "KeyError")]
    assert classes == ["Bad"]


def test_no_raise_of_the_root():
    found = {path: [line for line, _ in roots] for path, (roots, _, _) in SCANS.items() if roots}
    pending = {path: lines for path, lines in found.items() if path in PENDING_ROOT}
    assert {p: len(lines) for p, lines in pending.items()} == PENDING_ROOT, (
        "the pending list is stale: set the counts to what is left, or drop the file"
    )
    rest = {path: lines for path, lines in found.items() if path not in PENDING_ROOT}
    assert not rest, f"raise the family's class (eoslab/errors.py draws them), not EoslabError itself: {rest}"


def test_builtin_raises_are_only_the_listed_ones():
    found: collections.Counter[tuple[str, str]] = collections.Counter()
    lines: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for path, (_, builtin, _) in SCANS.items():
        for line, name in builtin:
            found[(path, name)] += 1
            lines[(path, name)].append(line)
    listed = {key: count for key, (count, _) in {**ALLOWED, **PENDING}.items()}
    new = {f"{p}:{lines[(p, n)]}": n for (p, n), c in found.items() if c > listed.get((p, n), 0)}
    assert not new, (
        f"a builtin exception raised to the caller: raise the family's class from eoslab/errors.py instead, "
        f"or, if it is caught inside the package or is a programming error, list it in ALLOWED with why: {new}"
    )
    stale = {f"{p} {n}": (c, found.get((p, n), 0)) for (p, n), c in listed.items() if found.get((p, n), 0) < c}
    assert not stale, f"listed raises that are gone (listed, found): lower the count or drop the entry: {stale}"


def test_own_exception_classes_join_the_tree():
    found = {(path, name) for path, (_, _, classes) in SCANS.items() for name in classes}
    assert found == set(OWN_BUILTIN_CLASSES), (
        "an exception class that derives only from builtins: derive it from a family of eoslab/errors.py, "
        f"or list it in OWN_BUILTIN_CLASSES with where it is caught: {sorted(found ^ set(OWN_BUILTIN_CLASSES))}"
    )
