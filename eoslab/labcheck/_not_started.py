"""An answer still as the lab left it is told so at once, before the check does any work.

Most checks run an experiment on the cluster before they look at the answer: lab 02's t4 restarts a
broker and draws 2000 producer ids, lab 03's t4 fences a worker, lab 06's t2 loads every run in Spark. An
answer the learner has not written yet fails whatever that experiment shows, so a check first asks
whether the answer is still the lab's TODO; if so the learner reads "finish the TODO cell" in a second,
not after a minute, and an untouched lab's checks all answer at once.

"Still the lab's TODO" means exactly what the labs ship, and nothing a learner writes:

- a value that is ``None`` (``predicted_allocations = None  # TODO``) passed for a parameter of the
  check that has no default (a parameter whose default is ``None``, like lab 06's ``runs``, may be
  ``None``);
- a function whose body, a docstring aside, is one ``pass``, a bare ``return``, or one ``return`` of an
  EMPTY literal: ``None``, an empty list, tuple, dict, set or string, or a tuple of ``None`` (``return
  (None, None)``). A constant that could be a guess (``return 3``, ``return "a"``) is an answer, and the check
  judges it ("you predicted 3"). A function whose source the kernel no longer has is left to the check.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["stub_body", "unstarted"]


def unstarted(check: Callable[..., Any], args: Sequence[Any], kwargs: Mapping[str, Any]) -> str | None:
    """What of the answers given to ``check`` is still the lab's TODO (the sentence's "saw" part), or None."""
    try:
        signature = inspect.signature(check)
        bound = signature.bind_partial(*args, **kwargs)
    except (TypeError, ValueError):  # a call the check itself will refuse, with its own message
        return None
    params = signature.parameters
    for name, value in bound.arguments.items():
        if value is None and params[name].default is inspect.Parameter.empty:
            return f"{name} still None, as the lab left it"
        stub = _stub(value) if inspect.isfunction(value) else None
        if stub is not None:
            return f"{value.__name__}() still the lab's TODO stub (its body does nothing but `{stub}`)"
    return None


def _function_node(fn: Callable[..., Any]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):  # no source (the cell is gone), or not a def statement
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def stub_body(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The one statement of a function that does nothing (``pass``, ``return <empty literal>``), or None."""
    body = list(node.body)
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        body = body[1:]  # the docstring
    if len(body) != 1:
        return None
    stmt = body[0]
    if isinstance(stmt, ast.Pass) or (isinstance(stmt, ast.Return) and _is_empty(stmt.value)):
        return ast.unparse(stmt)
    return None


def _is_empty(node: ast.expr | None) -> bool:
    """``None``, an empty literal container or string, or a tuple of ``None``: what a stub returns."""
    if node is None:
        return True
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    if isinstance(value, tuple) and value and all(v is None for v in value):
        return True
    return value is None or (isinstance(value, (list, tuple, dict, set, str, bytes)) and len(value) == 0)


def _stub(fn: Callable[..., Any]) -> str | None:
    node = _function_node(fn)
    return None if node is None else stub_body(node)
