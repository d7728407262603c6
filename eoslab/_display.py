"""Showing things in a notebook: Mermaid diagrams (live in JupyterLab, a static SVG elsewhere), and the real lines
of a file the course ships (``examples/``), so a notebook shows the code a learner takes home, not a copy."""

from __future__ import annotations

import ast
from pathlib import Path

from eoslab._mermaid_svg import mermaid_svg
from eoslab.errors import SetupError


def mermaid_bundle(diagram: str) -> dict[str, str]:
    """The output's representations, one output: each viewer shows the best one it can render.

    JupyterLab ≥ 4.1 renders ``text/vnd.mermaid`` live (its Mermaid renderer ranks 61, before
    ``image/svg+xml`` at 80); ``jupyter nbconvert --to html`` ranks the SVG first, and so does
    any viewer that does not know Mermaid's MIME type (GitHub's preview, older JupyterLab): they
    show the static copy this kit draws itself (:mod:`eoslab._mermaid_svg`), which needs no
    network. A console shows the source.
    """
    bundle = {"text/vnd.mermaid": diagram, "text/plain": diagram}
    svg = mermaid_svg(diagram)
    if svg is not None:
        bundle["image/svg+xml"] = svg
    return bundle


def show_mermaid(diagram: str) -> None:
    """Display a Mermaid diagram: live in JupyterLab ≥ 4.1, a static SVG copy in every other viewer."""
    from IPython.display import display

    display(mermaid_bundle(diagram), raw=True)


def _defined(node: ast.stmt) -> list[tuple[str, tuple[int, int]]]:
    """The names a top-level statement defines or assigns, each with the statement's (first, last) line
    (a definition's first line is its first decorator's)."""
    last = node.end_lineno or node.lineno
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [(node.name, (min([node.lineno, *(d.lineno for d in node.decorator_list)]), last))]
    if isinstance(node, ast.Assign):
        return [(t.id, (node.lineno, last)) for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [(node.target.id, (node.lineno, last))]
    return []


def _spans(tree: ast.Module, names: tuple[str, ...], path: Path) -> list[tuple[int, int]]:
    """(first, last) line of each top-level definition or assignment named, in the order asked."""
    found = {name: span for node in tree.body for name, span in _defined(node)}
    missing = [n for n in names if n not in found]
    if missing:
        raise SetupError(f"{path} defines no {', '.join(missing)} at its top level: name one of {sorted(found)}.")
    return [found[n] for n in names]


def code_of(path: str | Path, *names: str) -> tuple[str, list[tuple[int, int]]]:
    """The source of the top-level definitions ``names`` (functions, classes, assignments) of the Python file
    ``path``, each as written (decorators, comments and docstring included), separated by a blank line; and their
    (first, last) line numbers. With no names: the whole file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise SetupError(f"There is no file {path}: run the notebook from the course's notebooks/ folder.") from None
    lines = text.splitlines()
    if not names:
        return text.rstrip("\n"), [(1, len(lines))]
    spans = _spans(ast.parse(text, filename=str(path)), names, path)
    return "\n\n".join("\n".join(lines[a - 1 : b]) for a, b in spans), spans


def show_code(path: str | Path, *names: str) -> None:
    """Display the real lines of a file the course ships (``examples/eos_loop.py``), highlighted: the named
    top-level definitions (see :func:`code_of`), or the whole file. Headed by the file's name and line numbers,
    so a learner finds them in the file."""
    from IPython.display import display

    source, spans = code_of(path, *names)
    where = ", ".join(f"{a}–{b}" for a, b in spans)
    name = Path(path).as_posix().removeprefix("../")
    display(
        {
            "text/markdown": f"`{name}`, lines {where}:\n\n```python\n{source}\n```",
            "text/plain": f"# {name}, lines {where}\n{source}",
        },
        raw=True,
    )
