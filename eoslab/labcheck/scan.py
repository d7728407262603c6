"""A learner's cells read as code, never run: which of the kit's names they use, and how they spell them.

The class rerun decides two things from the notebook itself, before or beside running it: whether a
cell reaches into the kit to change it (:mod:`eoslab.classroom._trusted`), and whether an answer calls a
kit function that computes the answer (:mod:`eoslab.labcheck._forbidden`). Both need the same reading:
a cell parsed as IPython would run it (magics rewritten, and the code inside ``%time``/``%%capture``
read too), the names its imports bind (``from eoslab import inspect as ins``), and a name's path
resolved to the kit's object itself, so that every spelling of one function is the same function.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from collections.abc import Iterable, Iterator, Mapping
from types import ModuleType
from typing import Any

KIT = "eoslab"
_MISSING = object()
_MAGIC_RUNNERS = ("run_line_magic", "run_cell_magic")


def cell_source(cell: Mapping[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _ipython_to_python(source: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # no IPython: then no kernel rewrites magics either
        return source
    try:
        return str(TransformerManager().transform_cell(source))
    except Exception:  # noqa: BLE001 - IPython could not rewrite it: read the source as it is
        return source


def parse(source: str) -> ast.Module | None:
    """A cell as the kernel runs it (IPython's magics rewritten into calls); None when it is not Python,
    which the kernel cannot run either."""
    try:
        return ast.parse(_ipython_to_python(source))
    except (SyntaxError, ValueError):
        return None


def trees(source: str) -> list[ast.Module]:
    """The cell, then the code its magics run (``%time x = f()``, ``%%capture``), recursively."""
    tree = parse(source)
    if tree is None:
        return []
    found = [tree]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MAGIC_RUNNERS
            and node.args
            and isinstance(node.args[-1], ast.Constant)
            and isinstance(node.args[-1].value, str)
        ):
            found += trees(node.args[-1].value)
    return found


def chain(node: ast.AST) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; None for anything that is not a plain dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def import_names(tree: ast.AST) -> dict[str, str]:
    """Every name an import in ``tree`` binds, with the dotted path it stands for."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def names_of(cells: Iterable[ast.Module]) -> dict[str, str]:
    """The dotted paths a notebook's names stand for: its imports, and top-level ``x = kit.path`` aliases."""
    names: dict[str, str] = {}
    cells = list(cells)
    for tree in cells:
        names.update(import_names(tree))
    for tree in cells:
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                path = dotted(stmt.value, names)
                if path is not None:
                    names[stmt.targets[0].id] = path
    return names


def dotted(node: ast.AST, names: Mapping[str, str]) -> str | None:
    """The dotted path a name or attribute stands for, through ``names``; None when its root is unknown."""
    parts = chain(node)
    if parts is None or parts[0] not in names:
        return None
    return ".".join([names[parts[0]], *parts[1:]])


def _walk(obj: Any, attrs: Iterable[str]) -> Any:
    """Attributes of modules and classes only: nothing a learner built is asked (a property could run code)."""
    for attr in attrs:
        if attr.startswith("__") or not (isinstance(obj, ModuleType) or inspect.isclass(obj)):
            return _MISSING
        obj = getattr(obj, attr, _MISSING)
        if obj is _MISSING:
            return _MISSING
    return obj


def kit_object(path: str, *, load: bool = True) -> Any:
    """The kit's object at ``path`` (``eoslab.inspect.coordinator_partition``), or None.

    Only the kit's own modules are imported (never ``__main__``, never a learner's), and with
    ``load=False`` none: an object whose module was never imported cannot have been used.
    """
    parts = path.split(".")
    if parts[0] != KIT or any(p.startswith("__") for p in parts):
        return None
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        module = sys.modules.get(name)
        if module is None and load:
            try:
                module = importlib.import_module(name)
            except ImportError:
                continue
            except Exception:  # noqa: BLE001 - a module that cannot be imported names nothing
                return None
        if module is not None:
            obj = _walk(module, parts[i:])
            return None if obj is _MISSING else obj
    return None


def resolve(node: ast.AST, names: Mapping[str, str], namespace: Mapping[str, Any] | None = None) -> Any:
    """What a dotted name in a cell is: through the cell's imports, else through the kernel's namespace."""
    path = dotted(node, names)
    if path is not None:
        return kit_object(path)
    parts = chain(node)
    if parts is None or namespace is None or parts[0] not in namespace:
        return None
    obj = _walk(namespace[parts[0]], parts[1:])
    return None if obj is _MISSING else obj


def name_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every dotted name in ``tree`` (``a``, ``a.b``, ``a.b.c``), and every name an import brings in."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and chain(node) is not None:
            yield node
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    yield ast.Name(id=a.asname or a.name, ctx=ast.Load())
