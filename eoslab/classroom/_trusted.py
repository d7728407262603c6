"""What the class rerun runs: the learner's cells, and the instructor's checks.

A learner's notebook carries its graded cells, source and ``eoslab.grade`` metadata: a check cell
edited to ``verdict("t1", True, ...)`` would pass, and so would points raised in its metadata. So
before a rerun every graded cell is taken, by cell id, from the instructor's own copy of the lab
(``solutions/labNN_*.ipynb`` made into the lab as ``eoslab labs`` makes it, else ``labs/labNN_*``);
a notebook whose graded cells are missing, or carry ids the instructor's lab does not have, is
refused in one sentence. The learner's other cells are read, never run here, for the ways a cell
changes the checks instead of answering them (:func:`tampering`): assigning to an attribute of the
kit (monkeypatching a check), rebinding the name the check cells call through, ``sys.modules``,
``exec``, the grader's own files. Such a notebook scores 0 for that lab, with the reason.

This is a reading, not a sandbox: the rerun still runs the learner's code with the instructor's
rights, and code can hide from a reader. It turns a one-line cheat into work that shows.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from eoslab.classroom._labgen import lab_from_solution
from eoslab.errors import GradingError
from eoslab.labcheck import scan

RERUN = "rerun"
"""The folder, beside a learner's ``labs/`` in the class's work folder, of the notebooks as rerun."""

GRADER_FILES = ("EOSLAB_GRADE_LOG", "EOSLAB_GRADE_OUTCOMES", "eoslab-grade-")
"""Where the grader keeps the verdicts and cell outcomes of a run: no learner cell needs to name them."""

_HIDDEN_CODE = (["exec"], ["eval"])


def _grade(cell: Mapping[str, Any]) -> Any:
    return cell.get("metadata", {}).get("eoslab", {}).get("grade") if cell.get("cell_type") == "code" else None


def default_course() -> Path:
    """The instructor's course: the checkout this kit runs from, else the current folder."""
    from eoslab._paths import project_root

    return project_root() or Path.cwd()


def check_course(course: Path) -> None:
    """Refuse, before anything runs, a course folder that holds no lab to restore check cells from."""
    if not any(any((course / d).glob("lab*.ipynb")) for d in ("solutions", "labs")):
        raise GradingError(
            f"{course} holds no solutions/ or labs/ with lab notebooks: grade from your course folder, or give "
            "it with --course (the check cells are taken from there)."
        )


def instructor_lab(course: Path, notebook: str) -> dict[str, Any]:
    """The instructor's copy of the lab ``notebook`` is (by its ``labNN`` prefix): the lab generated from
    the solution (as ``eoslab labs`` makes it), else the course's ``labs/`` copy."""
    m = re.match(r"(lab\d+)_", notebook)
    if not m:
        raise GradingError(f"{notebook} is not named after a lab (lab01_..., lab02_...): it cannot be graded.")
    for folder in ("solutions", "labs"):
        found = sorted((course / folder).glob(f"{m.group(1)}_*.ipynb"))
        if found:
            nb: dict[str, Any] = json.loads(found[0].read_text())
            return lab_from_solution(nb) if folder == "solutions" else nb
    raise GradingError(
        f"the course {course} has no {m.group(1)} in solutions/ or labs/: {notebook} cannot be graded; give the "
        "course that holds it with --course."
    )


def _cells(ids: list[str]) -> str:
    return f"cell {ids[0]} is" if len(ids) == 1 else f"cells {', '.join(ids)} are"


def _ids_twice(cells: list[dict[str, Any]], graded: Mapping[Any, Any]) -> list[str]:
    ids = [c.get("id") for c in cells]
    return sorted({str(i) for i in ids if i is not None and ids.count(i) > 1})


def _graded_missing(cells: list[dict[str, Any]], graded: Mapping[Any, Any]) -> list[str]:
    ids = [c.get("id") for c in cells]
    return [str(i) for i in graded if i not in ids]


def _graded_foreign(cells: list[dict[str, Any]], graded: Mapping[Any, Any]) -> list[str]:
    return [str(c.get("id")) for c in cells if _grade(c) and c.get("id") not in graded]


_Finder = Callable[[list[dict[str, Any]], Mapping[Any, Any]], list[str]]
_MISMATCHES: tuple[tuple[_Finder, Callable[[list[str]], str]], ...] = (
    (_ids_twice, lambda ids: f"cell ids {', '.join(ids)} appear more than once"),
    (_graded_missing, lambda ids: f"its graded {_cells(ids)} missing"),
    (_graded_foreign, lambda ids: f"its graded {_cells(ids)} not in the course's lab (the ids do not match)"),
)
"""Each way the learner's cells can fail to take the graded cells by id, in the order they are told."""


def _mismatch(cells: list[dict[str, Any]], graded: Mapping[Any, Any]) -> str | None:
    """Why the learner's cells cannot take the course's graded cells by id (None: they can)."""
    for find, say in _MISMATCHES:
        found = find(cells, graded)
        if found:
            return say(found)
    return None


def restore(nb: dict[str, Any], lab: dict[str, Any], name: str) -> dict[str, Any]:
    """``nb`` with every graded cell (type, source, metadata) taken from ``lab`` by cell id; refused when a
    graded cell is missing, or a cell claims to be graded under an id ``lab`` does not grade."""
    graded = {c.get("id"): c for c in lab.get("cells", []) if _grade(c)}
    cells = nb.get("cells")
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise GradingError(f"{name} is not a valid notebook (no list of cells): restore it from the lab folder.")
    problem = _mismatch(cells, graded)
    if problem is not None:
        raise GradingError(
            f"{name} cannot be graded: {problem}, so its check cells cannot be taken from the course's lab; ask "
            "for the lab as handed out, with its check cells."
        )
    out = copy.deepcopy(nb)
    for i, cell in enumerate(out["cells"]):
        if cell.get("id") in graded:
            out["cells"][i] = {**copy.deepcopy(graded[cell["id"]]), "outputs": [], "execution_count": None}
    return out


# -- what a learner's cell does to the checks ------------------------------------------------------------


def _root(node: ast.AST) -> tuple[str | None, list[str]]:
    """The name an assignment target hangs from (``vars(x)[k]`` hangs from ``x``), and the attributes on the way."""
    attrs: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and scan.chain(node.func) in (["vars"], ["getattr"]) and node.args:
            node = node.args[0]
        elif isinstance(node, ast.Name):
            return node.id, attrs[::-1]
        else:
            return None, []


def _written(node: ast.AST) -> list[ast.AST]:
    """The targets a statement writes to as written (tuples not unpacked); ``setattr``/``delattr``'s object."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        return list(node.targets)
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Call) and scan.chain(node.func) in (["setattr"], ["delattr"]) and len(node.args) > 1:
        attr = node.args[1]
        name = attr.value if isinstance(attr, ast.Constant) and isinstance(attr.value, str) else "(a name)"
        return [ast.Attribute(value=node.args[0], attr=name, ctx=ast.Store())]
    return []


def _targets(node: ast.AST) -> Iterator[ast.AST]:
    """What a statement writes to, tuples unpacked; ``setattr``/``delattr``'s object."""
    todo = _written(node)
    while todo:
        t = todo.pop()
        if isinstance(t, (ast.Tuple, ast.List)):
            todo += t.elts
        elif isinstance(t, ast.Starred):
            todo.append(t.value)
        elif isinstance(t, (ast.Attribute, ast.Subscript)):
            yield t


def _protected(lab: Mapping[str, Any]) -> dict[str, str]:
    """The names the course's graded cells call through, with the module each stands for (``lab01`` ->
    ``eoslab.m01_idempotence.lab`` for ``lab01.check_...(...)``, ``lab04`` -> ``eoslab.grading.lab04``)."""
    code = [c for c in lab.get("cells", []) if c.get("cell_type") == "code"]
    names = scan.names_of(t for c in code for t in scan.trees(scan.cell_source(c)))
    out: dict[str, str] = {}
    for cell in filter(_grade, code):
        for tree in scan.trees(scan.cell_source(cell)):
            for node in ast.walk(tree):
                parts = scan.chain(node.func) if isinstance(node, ast.Call) else None
                if parts and parts[0] in names:
                    out[parts[0]] = names[parts[0]]
    return out


def _made_by_the_kit(trees: list[ast.Module], names: Mapping[str, str]) -> set[str]:
    """Names bound at top level to what a kit call returned (``cluster = eoslab.connect()``): the checks
    call that object's methods too."""
    made = set()
    for tree in trees:
        for s in tree.body:
            if (
                isinstance(s, ast.Assign)
                and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)
                and isinstance(s.value, ast.Call)
                and (scan.dotted(s.value.func, names) or "").startswith(scan.KIT + ".")
            ):
                made.add(s.targets[0].id)
    return made


def _bound(node: ast.stmt) -> dict[str, str | None]:
    """The names a top-level statement binds, each with the module an import binds it to (None: not an import)."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return dict(scan.import_names(node))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name: None}
    return {n.id: None for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _grader_file_named(node: ast.AST) -> str | None:
    """The first of the grader's own files a string constant names."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    return next((f for f in GRADER_FILES if f in node.value), None)


class _Reader:
    """The names of one notebook that stand for the kit, and the ones its check cells are called through."""

    def __init__(self, nb: Mapping[str, Any], lab: Mapping[str, Any]) -> None:
        self.protected = _protected(lab)
        self.cells = [
            (str(c.get("id") or i), scan.trees(scan.cell_source(c)))
            for i, c in enumerate(nb.get("cells", []))
            if c.get("cell_type") == "code" and not _grade(c)
        ]
        trees = [t for _, ts in self.cells for t in ts]
        self.names = scan.names_of(trees)
        self.made = _made_by_the_kit(trees, self.names)

    def kit_target(self, target: ast.AST) -> str | None:
        """Why writing to ``target`` changes the kit (or the modules Python imports it from), or None."""
        root, attrs = _root(target)
        if root is None:
            return None
        path = self.names.get(root, "")
        if path == scan.KIT or path.startswith(scan.KIT + ".") or root in self.made:
            return f"assigns {ast.unparse(target)}, a part of the kit (monkeypatching it)"
        if ".".join([path, *attrs]).startswith("sys.modules"):
            return f"assigns {ast.unparse(target)}, the modules the checks are imported from"
        return None

    def _declared_global(self, node: ast.stmt) -> str | None:
        for n in ast.walk(node):
            if isinstance(n, ast.Global) and (names := set(n.names) & set(self.protected)):
                return f"declares global {', '.join(sorted(names))}"
        return None

    def _rebound(self, node: ast.stmt) -> str | None:
        for name, path in _bound(node).items():
            if name in self.protected and path != self.protected[name]:
                return f"rebinds {name}, the name its check cells call ({self.protected[name]})"
        return None

    def rebinding(self, tree: ast.Module) -> str | None:
        """A top-level binding of a name the check cells call through, other than importing that module."""
        for node in tree.body:
            why = self._declared_global(node) or self._rebound(node)
            if why is not None:
                return why
        return None

    def _node_problems(self, node: ast.AST) -> Iterator[str]:
        for target in _targets(node):
            why = self.kit_target(target)
            if why:
                yield why
        if isinstance(node, ast.Call) and scan.chain(node.func) in _HIDDEN_CODE:
            yield f"runs code from a string ({ast.unparse(node.func)}), which the grader cannot read"
        named = _grader_file_named(node)
        if named is not None:
            yield f"names the grader's own record of the run ({named})"

    def problems(self, cell: str, tree: ast.Module) -> Iterator[str]:
        why = self.rebinding(tree)
        if why:
            yield f"cell {cell} {why}"
        for node in ast.walk(tree):
            yield from (f"cell {cell} {why}" for why in self._node_problems(node))


def tampering(nb: Mapping[str, Any], lab: Mapping[str, Any]) -> list[str]:
    """What the notebook's non-graded code cells do to the checks instead of answering them (empty: nothing)."""
    reader = _Reader(nb, lab)
    return [p for cell, ts in reader.cells for t in ts for p in reader.problems(cell, t)]


def trusted_copy(notebook: Path, course: Path) -> Path:
    """The notebook to rerun, written to :data:`RERUN` beside the learner's ``labs/``: its graded cells the
    course's own; refused (GradingError) when they cannot be restored, or when a cell tampers with the kit."""
    try:
        nb = json.loads(notebook.read_bytes())
    except ValueError as exc:
        raise GradingError(
            f"{notebook.name} is not a valid notebook ({exc}): restore it from the lab folder."
        ) from None
    if not isinstance(nb, dict):
        raise GradingError(
            f"{notebook.name} is not a valid notebook (not a JSON object): restore it from the lab folder."
        )
    lab = instructor_lab(course, notebook.name)
    restored = restore(nb, lab, notebook.name)
    found = tampering(restored, lab)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise GradingError(f"tampered: {found[0]}{more}: this lab scores 0.")
    out = notebook.parent.parent / RERUN / notebook.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(restored, indent=1, ensure_ascii=False) + "\n")
    return out
