"""Kit functions that compute a task's answer: an answer cell that uses one is refused.

The kit is in the learner's kernel, and some of its functions answer a task outright (lab 03's
``find_coordinator`` is ``ins.coordinator_partition`` plus a lookup). :data:`FORBIDDEN` lists them
per check and task. Two readers enforce it, on the answer cell's source as the grader runs it:

- the check itself (:func:`refusal`, called by :func:`eoslab.labcheck.guarded` before any work): the
  cell each answer function was defined in (IPython keeps every cell's source in ``linecache``), and
  the cells of the notebook's own functions it calls, resolved in the kernel's namespace;
- ``eoslab grade`` (:func:`forbidden_answers`, in the grader's process, which the kernel cannot touch):
  the cells that bind each name the graded cell passes to its check, and the functions they call,
  resolved through the notebook's imports. It also covers answers that are values (lab 01's ``conf``).

A helper that only *shows* data the learner must reason about is not listed: the lists are what
would compute the answer, or read it off the cluster or the check's own scenario.
"""

from __future__ import annotations

import ast
import inspect
import linecache
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from eoslab._paths import PACKAGE_DIR
from eoslab.labcheck import scan

FORBIDDEN: dict[str, dict[str, tuple[str, ...]]] = {
    "eoslab.m01_idempotence.lab": {
        # t1 asks which settings make a lost ack harmless: these are the kit's answer to it.
        "t1": (
            "eoslab.clients.IDEMPOTENT_PRODUCER",
            "eoslab.faults.DEMO_PRODUCER",
            "eoslab.faults.demo_producer_config",
        ),
        # t2: the check's own judge of a group, and its list of the writes stored twice.
        "t2": ("eoslab.m01_idempotence._lab_cases.what_it_mixes", "eoslab.m01_idempotence.lab._stored_twice"),
        # t3: the check's model of the controller's election.
        "t3": ("eoslab.m01_idempotence._lab_cases.elect",),
        # t4, t5: fixed answers (a choice, an error code); nothing computes them but the experiment itself.
    },
    "eoslab.m02_pid_ranges.lab": {
        # t1: arithmetic; ins.block_of only searches granted blocks, which do not hold every id asked.
        "t2": ("eoslab.inspect.block_of",),  # the grant holding an id: its broker_id is the answer
        # t3: the notebook's own prediction, and asking broker 2 for an id (which IS the block it draws from).
        "t3": (
            "eoslab.m02_pid_ranges.lesson.next_block",
            "eoslab.m02_pid_ranges.lesson.current_block",
            "eoslab.m02_pid_ranges.lesson.position",
        ),
        # t4: a fixed count; measuring it is learning it, and nothing else computes it.
    },
    "eoslab.m03_transactions.lab": {
        # t1: the task says it: compute the partition yourself, do not ask the cluster nor the kit.
        "t1": (
            "eoslab.inspect.coordinator_partition",
            "eoslab.inspect.java_string_hash",
            "eoslab.inspect.kafka_abs",
            "eoslab.inspect.coordinator",
            "eoslab.inspect.coordinators",
            "eoslab.inspect.predict_coordinators",
            "eoslab.cluster.find_coordinators",
            "eoslab.m03_transactions.lesson.wait_coordinator",
        ),
        # t2: no kit function writes a transaction to the check's topics.
        # t3: readers that choose read_committed for you, or read the whole topic at a level.
        "t3": (
            "eoslab.demos.read_values",
            "eoslab.demos.consumer",
            "eoslab.demos.READ_COMMITTED",
            "eoslab.history.read_final",
            "eoslab.history.read_both",
            "eoslab.analysis.topic_values",
        ),
        # t4, t5: the pipeline's decision per error class is the answer.
        "t4": ("eoslab.demos.pipeline.classify",),
        "t5": ("eoslab.demos.pipeline.classify",),
        # t6: running the steps and reading __transaction_state back measures what is to be predicted.
        "t6": (
            "eoslab.m03_transactions._lab_setup.run_scenario",
            "eoslab.m03_transactions._lab_setup.logged_states",
            "eoslab.inspect.transaction_history",
            "eoslab.inspect.transaction_histories",
        ),
    },
    "eoslab.grading.lab04": {
        # t1, t2, t4 read the scenario of the setup cell, whose truth the check keeps in _lab04's cache.
        "t1": (
            "eoslab.grading._lab04.scenario",
            "eoslab.grading._lab04._CACHE",
            "eoslab.grading._lab04.read_offsets",
            "eoslab.demos.read_values",
            "eoslab.history.read_final",
            "eoslab.demos.read_committed.read_both",
            "eoslab.demos.read_committed.log_table",
            "eoslab.demos.read_committed.traced_read",
            "eoslab.analysis.topic_values",
        ),
        "t2": (
            "eoslab.grading._lab04.scenario",
            "eoslab.grading._lab04._CACHE",
            "eoslab.inspect.offsets",
            "eoslab.inspect.partition_offsets",
            "eoslab.demos.read_committed.read_both",
            "eoslab.demos.read_committed.lso_facts",
        ),
        # t3: describe_producers, abort_transaction and partition_offsets are the tools the task names.
        # t4: committed_offsets and ins.offsets are the data the task names; the scenario is its answer.
        "t4": ("eoslab.grading._lab04.scenario", "eoslab.grading._lab04._CACHE"),
    },
    "eoslab.grading.lab05": {
        # The pipeline's own batch (pipe._proc.eos_batch) and its error classifier are the loop to write.
        task: ("eoslab.demos.pipeline.classify", "pipe._proc")
        for task in ("t1", "t2", "t3")
    },
    "eoslab.m07_production.lab": {
        # The draw names the mistake, and the kit's programs are the fixed one: the diagnosis and the fix to make.
        task: (
            "eoslab.m07_production.lab.draw",
            "eoslab.m07_production.lab._mistake",
            "eoslab.m07_production.lesson.program",
            "eoslab.m07_production.lesson.RIGHT",
            "eoslab.m07_production.lesson.MISTAKES",
        )
        for task in ("t1", "t2", "t3")
    },
}
"""Per check module and task, what an answer may not use: the kit's objects by dotted path (every
spelling of one object counts), or ``receiver.attribute`` for a private attribute of an object the
check hands over (``pipe._proc``, the processor behind the lab 05 ``Pipe``). Lab 06 is judged on
held-out runs instead."""


def forbidden(module: str, task: str) -> tuple[str, ...]:
    return FORBIDDEN.get(module, {}).get(task, ())


def sentence(task: str, entry: str) -> str:
    """What a learner reads: the rule, and the name to leave alone."""
    verb = "call" if callable(scan.kit_object(entry, load=False)) else "use"
    return f"task {task} asks you to compute this yourself: do not {verb} {entry}."


def saw(entry: str, where: str) -> str:
    return f"{entry} in {where}"


def message(task: str, entry: str, where: str) -> str:
    """The report's message, as :func:`eoslab.labcheck.verdict` words a failed check."""
    return f"saw {saw(entry, where)}. Hint: {sentence(task, entry)}"


def _targets(entries: Iterable[str]) -> tuple[dict[int, tuple[str, Any]], dict[str, str]]:
    """The entries as the kit's objects (by id; only modules already imported can hold one that was used)
    and as attribute names."""
    objects: dict[int, tuple[str, Any]] = {}
    attrs: dict[str, str] = {}
    for entry in entries:
        if entry.startswith(scan.KIT + "."):
            obj = scan.kit_object(entry, load=False)
            if obj is not None:
                objects[id(obj)] = (entry, obj)
        else:
            attrs[entry.rsplit(".", 1)[-1]] = entry
    return objects, attrs


def used(
    tree: ast.AST, entries: Iterable[str], names: Mapping[str, str], namespace: Mapping[str, Any] | None = None
) -> str | None:
    """The first of ``entries`` that ``tree`` uses (names resolved through ``names``, then ``namespace``)."""
    entries = tuple(entries)
    found = [obj for node in scan.name_nodes(tree) if (obj := scan.resolve(node, names, namespace)) is not None]
    objects, attrs = _targets(entries)  # after resolving: that may have imported an entry's module
    for obj in found:
        hit = objects.get(id(obj))
        if hit is not None and hit[1] is obj:
            return hit[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in attrs:
            return attrs[node.attr]
    return None


# -- in the kernel: the check's own refusal ----------------------------------------------------------------


def _learners(obj: Any) -> bool:
    """A function the notebook (or a learner's file) defined, not one of the kit's."""
    if not inspect.isfunction(obj):
        return False
    filename = obj.__code__.co_filename
    return not filename.startswith(str(PACKAGE_DIR))


def _cell_of(fn: Any) -> str:
    return "".join(linecache.getlines(fn.__code__.co_filename, fn.__globals__))


def _answer_cells(answers: Iterable[Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """(name, cell source, namespace) of each answer function, then of the notebook's functions its cell
    uses, each cell once."""
    todo = [a for a in answers if _learners(a)]
    seen: set[str] = set()
    while todo:
        fn = todo.pop(0)
        filename = fn.__code__.co_filename
        if filename in seen:
            continue
        seen.add(filename)
        source = _cell_of(fn)
        yield fn.__name__, source, fn.__globals__
        for tree in scan.trees(source):
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and _learners(fn.__globals__.get(node.id)):
                    todo.append(fn.__globals__[node.id])


def refusal(module: str, task: str, answers: Iterable[Any]) -> tuple[str, str] | None:
    """(entry, where) when an answer's cell uses what :data:`FORBIDDEN` lists for ``task``; a cell whose
    source the kernel no longer has is left to ``eoslab grade``'s own reading of the notebook."""
    entries = forbidden(module, task)
    if not entries:
        return None
    for name, source, namespace in _answer_cells(answers):
        for tree in scan.trees(source):
            entry = used(tree, entries, scan.import_names(tree), namespace)
            if entry is not None:
                return entry, f"the cell of {name}"
    return None


# -- in the grader: the notebook as it was run ------------------------------------------------------------


_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _binds(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a cell binds at its top level (functions' and classes' own bodies are theirs), and
    which of them are functions it defines."""
    out: set[str] = set()
    defs: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            defs.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return out, defs


def _check_calls(tree: ast.Module, names: Mapping[str, str]) -> Iterator[tuple[str, list[str]]]:
    """(check module, names passed to it) of each call of a check in a graded cell."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            path = scan.dotted(node.func, names)
            if path is not None and path.rsplit(".", 1)[0] in FORBIDDEN:
                args = [*node.args, *(k.value for k in node.keywords)]
                yield path.rsplit(".", 1)[0], [a.id for a in args if isinstance(a, ast.Name)]


_Cell = tuple[int, ast.Module, tuple[set[str], set[str]]]


def _cells_answering(cells: list[_Cell], before: int, wanted: list[str]) -> Iterator[int]:
    """The cells (before position ``before``) that last bound each name passed to the check, then those
    defining a function such a cell uses, each once."""
    todo, done = [(name, 0) for name in wanted], set()
    while todo:
        name, kind = todo.pop(0)
        where = [(i, tree) for i, tree, binds in cells if i < before and name in binds[kind]]
        if not where or where[-1][0] in done:
            continue
        i, tree = where[-1]
        done.add(i)
        yield i
        todo += [(n.id, 1) for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _first_use(trees: list[ast.Module], entries: tuple[str, ...], names: Mapping[str, str]) -> str | None:
    return next((e for t in trees if (e := used(t, entries, names)) is not None), None)


def _graded_calls(
    cells: list[dict[str, Any]], parsed: Mapping[int, list[ast.Module]], names: Mapping[str, str]
) -> Iterator[tuple[int, str, str, list[str]]]:
    """(position, task, check module, names passed) of each check a graded cell calls."""
    for i, trees in parsed.items():
        grade = cells[i].get("metadata", {}).get("eoslab", {}).get("grade")
        if grade and trees:
            for module, passed in _check_calls(trees[0], names):
                yield i, str(grade.get("task", "")), module, passed


def _code_trees(cells: list[dict[str, Any]]) -> dict[int, list[ast.Module]]:
    """Position -> the parsed trees of each code cell."""
    return {i: scan.trees(scan.cell_source(c)) for i, c in enumerate(cells) if c.get("cell_type") == "code"}


def _ungraded_cells(parsed: Mapping[int, list[ast.Module]], graded: set[int]) -> list[_Cell]:
    """The code cells that are not graded ones, each with the names it binds."""
    return [(i, ts[0], _binds(ts[0])) for i, ts in parsed.items() if ts and i not in graded]


def _first_forbidden(
    answers: list[_Cell], parsed: Mapping[int, list[ast.Module]], names: Mapping[str, str], at: int,
    passed: list[str], entries: tuple[str, ...],
) -> tuple[str, int] | None:  # fmt: skip
    """The first of ``entries`` used by a cell answering the check called at position ``at``, and that cell."""
    for j in _cells_answering(answers, at, passed):
        hit = _first_use(parsed[j], entries, names)
        if hit is not None:
            return hit, j
    return None


def forbidden_answers(nb: Mapping[str, Any]) -> dict[str, str]:
    """task -> the report's message, for each graded task whose answer cells use what it forbids."""
    cells = nb.get("cells", [])
    parsed = _code_trees(cells)
    names = scan.names_of(t for ts in parsed.values() for t in ts)
    calls = list(_graded_calls(cells, parsed, names))
    graded = {i for i, *_ in calls}
    answers = _ungraded_cells(parsed, graded)
    out: dict[str, str] = {}
    for i, task, module, passed in calls:
        found = None if task in out else _first_forbidden(answers, parsed, names, i, passed, forbidden(module, task))
        if found is not None:
            hit, j = found
            out[task] = message(task, hit, f"cell {cells[j].get('id') or j}")
    return out
