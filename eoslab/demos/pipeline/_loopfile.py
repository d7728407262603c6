"""Getting a learner's loop into the processor process: write it to a file (:func:`write_loop`), import it there
(:func:`load_loop`).

The learner writes ``run(pipe)`` in a notebook cell, beside the functions and classes it calls (the clients'
settings, the offsets to commit, each call's error handling: ``examples/eos_loop.py``'s shape). The processor runs
in another process, so :func:`write_loop` writes ``run`` and every function or class of the notebook it uses,
directly or through another, each from its source, after :data:`LOOP_HEADER`'s imports.
"""

from __future__ import annotations

import builtins
import dis
import importlib
import importlib.util
import inspect
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

from eoslab.demos.pipeline._parts import PipelineError

LOOP_HEADER = (
    "import time\n\nfrom confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition\n",
    ("time", "OFFSET_BEGINNING", "KafkaError", "KafkaException", "TopicPartition"),
)
"""What a loop written from a notebook can use besides builtins, its own imports and the notebook's functions and
classes it calls: the header of the file :func:`write_loop` writes, and the names it binds. The loop runs in
ANOTHER process, so other names of the notebook (its variables) do not exist there."""


def load_loop(spec: str) -> Callable[..., Any]:
    """The function ``spec`` names: ``"path/to/file.py:function"`` or ``"package.module:function"``."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise PipelineError(f"loop={spec!r}: give 'path/to/file.py:function' or 'package.module:function'.")
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise PipelineError(f"loop={spec!r}: there is no file {path}; write it first (write_loop does).")
            module_spec = importlib.util.spec_from_file_location(f"eoslab_loop_{path.stem}", path)
            if module_spec is None or module_spec.loader is None:
                raise PipelineError(f"loop={spec!r}: {path} cannot be imported as Python.")
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except SyntaxError as e:
        raise PipelineError(
            f"loop={spec!r}: line {e.lineno}: {e.msg}: fix the function and run its cell again."
        ) from None
    fn = getattr(module, name, None)
    if not callable(fn):
        raise PipelineError(f"loop={spec!r}: {where} has no function {name!r}.")
    return fn  # type: ignore[no-any-return]


def _globals_loaded(code: CodeType) -> set[str]:
    """The global names a function's code (and the functions nested in it) reads: what another
    process must also have. Attributes (``pipe.producer``) and the function's own locals are not."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _globals_loaded(const)
    return {str(n) for n in names}


def _source(obj: Any) -> str:
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        raise PipelineError(
            f"The source of {obj.__name__} cannot be found: define it with 'def' or 'class' in a cell and run that "
            "cell."
        ) from None


def _code_of(obj: Any) -> list[CodeType]:
    """The code objects whose global names ``obj`` needs: a function's, a class's methods'."""
    if inspect.isfunction(obj):
        return [obj.__code__]
    return [m.__code__ for m in vars(obj).values() if inspect.isfunction(m)]


def _helpers(fn: Callable[..., Any]) -> tuple[list[Any], list[str]]:
    """The notebook's functions and classes ``fn`` uses, directly or through each other (in the order they are
    first met, ``fn`` last), and the global names none of them defines."""
    header = set(LOOP_HEADER[1])
    found: dict[str, Any] = {}
    unknown: set[str] = set()
    todo: list[Any] = [fn]
    while todo:
        obj = todo.pop()
        for code in _code_of(obj):
            for name in _globals_loaded(code) - header - set(found) - {fn.__name__}:
                value = fn.__globals__.get(name)
                same_module = getattr(value, "__module__", None) == fn.__module__
                if (inspect.isfunction(value) or inspect.isclass(value)) and same_module:
                    found[name] = value
                    todo.append(value)
                elif not hasattr(builtins, name):
                    unknown.add(name)
    return [*reversed(found.values()), fn], sorted(unknown)


def write_loop(fn: Callable[..., Any], folder: str | Path) -> str:
    """Write ``fn`` (a function defined in a notebook cell or a file) and the notebook's functions and classes it
    uses to ``folder``, after :data:`LOOP_HEADER`; the ``loop=`` spec naming it. Fails, saying which, when they
    use a global name the other process will not have (a notebook variable)."""
    if not inspect.isfunction(fn):
        raise PipelineError(f"{fn!r} is not a function: pass the function itself, e.g. loop=run (no parentheses).")
    objects, unknown = _helpers(fn)
    header, bound = LOOP_HEADER
    if unknown:
        raise PipelineError(
            f"{fn.__name__} uses {', '.join(unknown)} from the notebook, but it runs in another process: "
            f"define or import them inside a function (available there: {', '.join(bound)}, and the notebook's "
            "functions and classes it calls)."
        )
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"loop_{fn.__name__}.py"
    body = "\n\n".join(_source(o) for o in objects)
    path.write_text(f'"""{fn.__name__}, written by eoslab from where it was defined."""\n\n{header}\n\n{body}')
    return f"{path}:{fn.__name__}"
