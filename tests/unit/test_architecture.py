"""The package's shape, checked by walking its imports (docs/architecture.md draws it).

Every ``import`` and ``from ... import`` in eoslab/ counts: at module level, inside a function,
and under ``if TYPE_CHECKING:``. A late import still decides what a part must know, and a circle
through one is a circle in the design even when Python does not trip over it at run time.

Seven rules:

1. no circle among eoslab's modules;
2. a private module ``eoslab.<pkg>._x`` is imported only from inside ``eoslab.<pkg>`` (the package's
   face is its ``__init__``); the top-level ``eoslab._x`` modules are the kit's shared plumbing;
3. a part imports only parts in its own row of ``LAYERS`` or above it, and nothing imports the
   package's face (``eoslab/__init__.py``), which sits on top of everything;
4. the pairs of ``APART`` never import one another's way, though the layers would allow it;
5. the learner's package holds no benchmark of the kit itself: those live in the developer package
   ``tools/kitbench/``, which nothing in eoslab imports;
6. no course module's code imports another module's lesson code (``COURSE_MODULES``): what two modules share,
   the lesson clients above all, has one home of its own (``SHARED_LESSON_CODE``);
7. the course modules' packages (``eoslab/mNN_*/``, one row of ``LAYERS``: ``MODULES``) import no sibling module,
   and no row below them imports one; each package's docstring names its notebook, lab, solution, docs and test
   folders, and every path it names exists.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

import eoslab

PACKAGE = Path(eoslab.__file__).parent

MODULES: tuple[str, ...] = ("m01_idempotence", "m02_pid_ranges", "m03_transactions", "m07_production")
"""The course modules' packages, one per module (``eoslab/mNN_*/``): its lesson code, its lab's checks, its
measurement. One row of ``LAYERS``: a module imports the rows above it, never a sibling, and nothing below imports
it (a notebook, a lab and its checks do, from a kernel)."""

MODULE_PACKAGE = re.compile(r"m\d\d_\w+")

LAYERS: list[tuple[str, ...]] = [
    (
        "errors",
        "_paths",
        "_progress",
        "_wait",
        "_ports",
        "_java",
        "_procs",
        "_linechild",
        "_timeouts",
        "_librdkafka",
        "_version",
        "_mermaid_svg",
        "_display",
    ),
    ("topology",),
    ("_jars", "_cds", "_compose", "_compose_lab", "_image"),
    ("protocol",),
    ("cluster",),
    ("faults",),
    ("clients", "java_client"),
    ("inspect",),
    ("_heal", "_up"),
    ("runs",),
    ("history",),
    ("demos",),
    ("bench",),
    ("analysis",),
    ("labcheck",),
    MODULES,
    ("grading",),
    ("classroom",),
    ("course",),
    ("_lab_image",),
    ("cli",),
]
"""Data flows down this list: a part may import its own row and the rows above, never a row below."""

RANK = {part: i for i, row in enumerate(LAYERS) for part in row}

APART: list[tuple[str, str]] = [("analysis", "bench")]
"""(importer, imported): ``analysis`` reads the runs ``bench`` wrote, through ``eoslab.runs`` (their format, their
labels and sentences), never the process that measured, so a class's runs are analysed where no bench runs."""

COURSE_MODULES: dict[str, tuple[str, ...]] = {
    "01": ("m01_idempotence",),
    "02": ("m02_pid_ranges",),
    "03": ("m03_transactions",),
    "04": ("demos.read_committed", "bench.read_committed", "grading.lab04", "grading._lab04"),
    "05": (
        "demos.pipeline",
        "demos.kafka17754",
        "demos.kip447",
        "bench.faults",
        "grading.lab05",
        "grading._lab05",
        "grading._lab05_cells",
    ),
    "06": ("bench.producers", "bench.audit", "grading.lab06", "grading._lab06_figures", "grading._heldout"),
    "07": ("m07_production",),
}
"""Each course module's own code in the package (a name covers its submodules), by module number."""

SHARED_LESSON_CODE = ("demos", "demos._clients", "demos._kept")
"""What the modules' code shares: the demos' face, the lesson clients' one home, the runs kept per backend."""


def course_module_of(module: str) -> str | None:
    """The course module whose code ``module`` (``eoslab.x.y``) is, or None for the kit's shared parts."""
    name = module.removeprefix("eoslab.")
    owners = [(len(own), n) for n, owns in COURSE_MODULES.items() for own in owns if f"{name}.".startswith(own + ".")]
    return max(owners)[1] if owners else None


def cross_module_imports(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for importer, targets in edges.items():
        mine = course_module_of(importer)
        for target in targets:
            theirs = course_module_of(target)
            if mine and theirs and theirs != mine:
                bad.append(f"{importer} (module {mine}) imports {target}, module {theirs}'s lesson code")
    return sorted(bad)


KIT_BENCHMARKS = {
    "eoslab.bench.spin": "tools.kitbench.spin",
    "eoslab.bench._spin_report": "tools.kitbench._spin_report",
    "eoslab.bench.wire": "tools.kitbench.wire",
    "eoslab.bench.kit": "tools.kitbench",
    "eoslab.bench.kit.cluster": "tools.kitbench.cluster",
    "eoslab.bench.kit.proxy": "tools.kitbench.proxy",
    "eoslab.bench.kit.startup": "tools.kitbench.startup",
    "eoslab.bench.kit.grading": "tools.kitbench.grading",
    "eoslab.analysis._selfbench": "tools.kitbench.analyse",
}
"""The benchmarks that measure the kit itself (its cluster's start, the proxy, the wire, librdkafka's spin, the
analysis's and the class rerun's times), by where they were and where they are. What module 06 measures of the
learner's runs stays in ``eoslab.bench`` (the harness, the peers, the C peer, ``--pin``, the brokers' warm-up)."""


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The eoslab modules ``name`` imports, anywhere in its source, resolved to module names."""
    known = set(known)
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "eoslab")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x / from ..y import z
                anchor = name.split(".") if is_pkg else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            if base.split(".")[0] != "eoslab":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)  # `from eoslab import inspect` names a module
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(name, path, mods) & set(mods) for name, path in mods.items()}


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""  # "" is the package's face, eoslab/__init__.py


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary circle found by a depth-first walk (one per back edge)."""
    found, state, stack = [], dict.fromkeys(edges, 0), []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt, 0) == 0:
                visit(nxt)
            elif state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
        state[node] = 2
        stack.pop()

    for node in sorted(edges):
        if state[node] == 0:
            visit(node)
    return found


def private_crossings(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for importer, targets in edges.items():
        for target in targets:
            parts = target.split(".")
            private = next((i for i, p in enumerate(parts) if p.startswith("_") and not p.startswith("__")), None)
            if private is None:
                continue
            owner = ".".join(parts[:private])  # the package whose private room this is
            if not (importer == owner or importer.startswith(owner + ".")):
                bad.append(f"{importer} imports {target}, private to {owner}")
    return sorted(bad)


def upward_imports(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for importer, targets in edges.items():
        mine = part_of(importer)
        for target in targets:
            theirs = part_of(target)
            if theirs == mine:
                continue
            if theirs == "":
                bad.append(f"{importer} imports the package's face (eoslab/__init__.py): import the part itself")
            elif mine and RANK[theirs] > RANK[mine]:
                bad.append(f"{importer} ({mine}) imports {target} ({theirs}), a part below it in LAYERS")
    return sorted(bad)


def sibling_imports(edges: dict[str, set[str]]) -> list[str]:
    """A course module's package importing another's: the modules share only the rows above them."""
    bad = []
    for importer, targets in edges.items():
        mine = part_of(importer)
        for target in targets:
            theirs = part_of(target)
            if MODULE_PACKAGE.fullmatch(mine) and MODULE_PACKAGE.fullmatch(theirs) and theirs != mine:
                bad.append(f"{importer} imports {target}: a course module imports no sibling module")
    return sorted(bad)


def imports_of_modules_from_below(edges: dict[str, set[str]], modules_rank: int) -> list[str]:
    """A part of a row below the modules' importing a module's package: the class rerun, the course and the command
    line run a module's notebook and lab in a kernel, they never import its code."""
    bad: list[str] = []
    for importer, targets in edges.items():
        mine = part_of(importer)
        if not mine or MODULE_PACKAGE.fullmatch(mine) or RANK.get(mine, -1) <= modules_rank:
            continue
        bad.extend(
            f"{importer} ({mine}) imports {t}, a course module's package: nothing below the modules imports one"
            for t in targets
            if MODULE_PACKAGE.fullmatch(part_of(t))
        )
    return sorted(bad)


def apart_imports(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for importer, targets in edges.items():
        for target in targets:
            if (part_of(importer), part_of(target)) in APART:
                bad.append(f"{importer} imports {target}: {part_of(importer)} keeps apart from {part_of(target)}")
    return sorted(bad)


def tools_imports(path: Path) -> set[str]:
    """The modules of the repository's ``tools`` that ``path`` imports, anywhere in its source."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "tools")
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "tools":
            found.add(node.module or "")
    return found


# -- the package --------------------------------------------------------------------------------------


def test_every_part_has_a_place_in_the_layers():
    parts = {part_of(m) for m in modules()} - {""}
    assert parts - set(RANK) == set(), "add the new part to LAYERS here and to docs/architecture.md"
    assert set(RANK) - parts == set(), "LAYERS names a part that no longer exists"


def _drawn_layers() -> list[tuple[str, ...]]:
    """The rows of the table under "## The layers" in docs/architecture.md: its parts, in order."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    section = text[text.index("## The layers") :]
    section = section[: section.index("\n## ", 1)]
    rows: list[tuple[str, ...]] = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            assert int(cells[0]) == len(rows), f"docs/architecture.md numbers its layer rows 0, 1, 2 ...: {line}"
            rows.append(tuple(c.strip().strip("`") for c in cells[1].split(",")))
    return rows


def test_the_documented_layers_are_the_checked_ones():
    """docs/architecture.md is the ten-minute picture; a part missing from it there is a part a newcomer
    does not know where to put (``_image`` was)."""
    assert _drawn_layers() == LAYERS


def test_no_import_circle():
    assert cycles(graph()) == []


def test_no_private_module_is_imported_across_packages():
    assert private_crossings(graph()) == []


def test_every_import_follows_the_layering():
    assert upward_imports(graph()) == []


def test_parts_kept_apart_do_not_import_each_other():
    assert apart_imports(graph()) == []


def test_no_course_module_imports_another_modules_lesson_code():
    assert cross_module_imports(graph()) == []


def test_no_course_module_imports_a_sibling_and_nothing_below_the_modules_imports_one():
    assert sibling_imports(graph()) == []
    assert imports_of_modules_from_below(graph(), RANK[MODULES[0]]) == []


def test_the_module_row_holds_every_module_package_and_each_belongs_to_its_course_module():
    packages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py") if MODULE_PACKAGE.fullmatch(p.parent.name))
    assert packages == sorted(MODULES), "a course module's package goes in MODULES here and in docs/architecture.md"
    assert all(course_module_of(f"eoslab.{m}") == m[1:3] for m in MODULES)


_NAMED_PATH = re.compile(r"``((?:notebooks|labs|solutions|docs|tests)/[^`\s]*)``")
_NAMED_KINDS = ("notebooks/", "labs/", "solutions/", "docs/", "tests/")


def paths_named(docstring: str) -> list[str]:
    """The repository paths a module package's docstring names (in double backquotes)."""
    return _NAMED_PATH.findall(docstring)


@pytest.mark.parametrize("package", MODULES)
def test_a_module_package_names_its_notebook_lab_solution_docs_and_tests_and_they_exist(package: str) -> None:
    """An instructor opens the package and finds the module's other files from its docstring."""
    doc = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text())) or ""
    named = paths_named(doc)
    assert [k for k in _NAMED_KINDS if not any(p.startswith(k) for p in named)] == [], named
    assert [p for p in named if not (PACKAGE.parent / p).exists()] == []
    number = package[1:3]
    assert any(p.startswith(f"tests/unit/m{number}/") for p in named)


def test_a_path_a_module_docstring_names_is_read():
    doc = "notebook: ``notebooks/02_x.ipynb``; tests: ``tests/unit/m02/``; not a path: ``lab02``, ``eoslab.x``"
    assert paths_named(doc) == ["notebooks/02_x.ipynb", "tests/unit/m02/"]


def test_every_demo_and_lab_check_belongs_to_a_course_module_or_is_shared():
    lesson = [
        m
        for m in modules()
        if m.split(".")[1:2] == ["demos"] or m.startswith("eoslab.grading.lab") or MODULE_PACKAGE.fullmatch(part_of(m))
    ]
    shared = {f"eoslab.{s}" for s in SHARED_LESSON_CODE}
    assert [m for m in lesson if m not in shared and course_module_of(m) is None] == []
    assert all(m in modules() for m in shared)


def test_the_package_holds_no_benchmark_of_the_kit_itself():
    """They measure the kit, not Kafka's exactly-once; a learner's package carries none of them."""
    here = set(modules())
    assert sorted(here & set(KIT_BENCHMARKS)) == []
    repo = PACKAGE.parent
    moved = {new: repo / Path(*new.split(".")) for new in KIT_BENCHMARKS.values()}
    missing = [n for n, p in moved.items() if not (p.with_suffix(".py").is_file() or (p / "__init__.py").is_file())]
    assert missing == [], "a kit benchmark left tools/kitbench/: name where it went in KIT_BENCHMARKS"
    assert {m: tools_imports(p) for m, p in modules().items() if tools_imports(p)} == {}


def test_the_loopback_address_is_written_once():
    """``eoslab._ports.LOOPBACK``; docstrings may say 127.0.0.1, code may not."""
    offenders = []
    for name, path in modules().items():
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if "127.0.0.1" in node.value and name != "eoslab._ports":
                    offenders.append(f"{name}:{node.lineno}")
    assert offenders == []


def test_librdkafka_loggers_are_configured_in_one_place():
    """Two modules setting one logger's level made the import order decide it; now one module does."""
    offenders = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "getLogger"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and "librdkafka" in str(node.args[0].value)
                and name != "eoslab._librdkafka"
            ):
                offenders.append(f"{name}:{node.lineno}")
    assert offenders == []


# -- the checks themselves: each must catch what it is for ----------------------------------------


def test_the_checks_catch_a_circle_a_private_crossing_and_an_upward_import():
    fake = {
        "eoslab.cluster._cluster": {"eoslab.cluster._seed", "eoslab.faults"},  # upward: cluster -> faults
        "eoslab.cluster._seed": {"eoslab.cluster._cluster"},  # a circle with _cluster
        "eoslab.faults": {"eoslab.faults._client"},
        "eoslab.faults._client": {"eoslab.cluster._admin", "eoslab._wait"},  # private crossing; _wait is fine
        "eoslab.cluster._admin": set(),
        "eoslab._wait": set(),
        "eoslab.grading.lab01": {"eoslab"},  # the package's face
        "eoslab.analysis._report": {"eoslab.bench.producers", "eoslab.runs"},  # analysis keeps apart from bench
        "eoslab.bench.producers": set(),
        "eoslab.runs": set(),
        "eoslab.demos.read_committed._log": {"eoslab.m03_transactions.lesson", "eoslab.demos._clients"},  # 04 -> 03
        "eoslab.m02_pid_ranges.lab": {"eoslab.m02_pid_ranges.lesson"},  # its own package: fine
        "eoslab.m02_pid_ranges.lesson": {"eoslab.demos", "eoslab.labcheck"},  # rows above: fine
        "eoslab.classroom._rerun": {"eoslab.m02_pid_ranges.lab", "eoslab.labcheck"},  # below the modules
    }
    assert cycles(fake) == [["eoslab.cluster._cluster", "eoslab.cluster._seed", "eoslab.cluster._cluster"]]
    assert private_crossings(fake) == ["eoslab.faults._client imports eoslab.cluster._admin, private to eoslab.cluster"]
    assert upward_imports(fake) == [
        "eoslab.cluster._cluster (cluster) imports eoslab.faults (faults), a part below it in LAYERS",
        "eoslab.demos.read_committed._log (demos) imports eoslab.m03_transactions.lesson (m03_transactions), a part "
        "below it in LAYERS",
        "eoslab.grading.lab01 imports the package's face (eoslab/__init__.py): import the part itself",
    ]
    assert apart_imports(fake) == [
        "eoslab.analysis._report imports eoslab.bench.producers: analysis keeps apart from bench"
    ]
    assert cross_module_imports(fake) == [
        "eoslab.demos.read_committed._log (module 04) imports eoslab.m03_transactions.lesson, module 03's lesson code"
    ]
    assert sibling_imports(fake) == []
    siblings = {"eoslab.m02_pid_ranges.lab": {"eoslab.m02_pid_ranges.lesson", "eoslab.m07_production.lesson"}}
    assert sibling_imports(siblings) == [
        "eoslab.m02_pid_ranges.lab imports eoslab.m07_production.lesson: a course module imports no sibling module"
    ]
    assert imports_of_modules_from_below(fake, RANK[MODULES[0]]) == [
        "eoslab.classroom._rerun (classroom) imports eoslab.m02_pid_ranges.lab, a course module's package: nothing "
        "below the modules imports one"
    ]


def test_an_import_of_the_developer_tools_is_seen(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text("import os\ndef f():\n    from tools.kitbench.spin import bench_spin\nimport tools.footprint\n")
    assert tools_imports(path) == {"tools.kitbench.spin", "tools.footprint"}


@pytest.mark.parametrize(
    "source,expected",
    [
        ("from eoslab import inspect as ins", {"eoslab.inspect"}),
        ("from eoslab.cluster import Cluster", {"eoslab.cluster"}),
        ("import eoslab.cluster", {"eoslab.cluster"}),
        ("def f():\n    from eoslab.faults import Proxy", {"eoslab.faults"}),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from eoslab.cluster import Cluster",
            {"eoslab.cluster"},
        ),
        ("from . import _records", {"eoslab.protocol._records"}),
    ],
)
def test_every_kind_of_import_is_seen(tmp_path, source, expected):
    path = tmp_path / "mod.py"
    path.write_text(source)
    known = {"eoslab", "eoslab.inspect", "eoslab.cluster", "eoslab.faults", "eoslab.protocol._records"}
    assert imports_of("eoslab.protocol.mod", path, known) == expected
