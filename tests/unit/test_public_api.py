"""The public surface, checked both ways (as httpx checks its exports): every package's ``__all__`` is
sorted, names only what exists, and leaves out no public name the package holds; and the exception
tree drawn in ``eoslab/errors.py`` is the real one."""

from __future__ import annotations
import __future__

import importlib
import pkgutil
import re
import types

import pytest

import eoslab
import eoslab.errors


def _packages() -> list[str]:
    names = ["eoslab"]
    for info in pkgutil.walk_packages(eoslab.__path__, "eoslab."):
        if info.ispkg:
            names.append(info.name)
    return sorted(names)


def _all_modules() -> list[types.ModuleType]:
    mods = [eoslab]
    for info in pkgutil.walk_packages(eoslab.__path__, "eoslab."):
        if info.name.endswith((".daemon", "._zombie_child")) or info.name == "eoslab.cli":
            continue  # programs (python -m ...), not libraries; they define no exceptions
        mods.append(importlib.import_module(info.name))
    return mods


PACKAGES = _packages()


def test_every_package_is_checked():
    assert {"eoslab", "eoslab.cluster", "eoslab.faults", "eoslab.runs", "eoslab.bench"} <= set(PACKAGES)


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_exists_and_is_complete(name):
    pkg = importlib.import_module(name)
    assert hasattr(pkg, "__all__"), f"{name} has no __all__"
    exported = list(pkg.__all__)
    assert exported == sorted(exported), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported), f"{name}.__all__ names something twice"
    missing = [n for n in exported if not hasattr(pkg, n)]
    assert not missing, f"{name}.__all__ names what does not exist: {missing}"
    public = sorted(
        n
        for n, v in vars(pkg).items()
        if not n.startswith("_")
        and not isinstance(v, types.ModuleType)  # a submodule is imported, not defined, by its package
        and not isinstance(v, __future__._Feature)  # `from __future__ import annotations`
    )
    unexported = [n for n in public if n not in exported]
    assert not unexported, (
        f"{name} holds public names it does not export (add them to __all__, or underscore them): {unexported}"
    )


_TREE_LINE = re.compile(r"^\s*(?P<bars>(?:│   |    )*)(?:├── |└── )(?P<name>\w+)\s+(?:(?P<module>eoslab[\w.]*):)?")


def _drawn_tree() -> dict[str, tuple[str, str]]:
    """name -> (parent, module to import it from), read from the docstring of eoslab/errors.py."""
    doc = eoslab.errors.__doc__ or ""
    lines = doc[doc.index("    EoslabError") :].splitlines()
    parents = ["EoslabError"]
    drawn: dict[str, tuple[str, str]] = {}
    for line in lines[1:]:
        m = _TREE_LINE.match(line)
        if m is None:
            break
        depth = len(m["bars"]) // 4
        del parents[depth + 1 :]
        drawn[m["name"]] = (parents[depth], m["module"] or "eoslab.errors")
        parents.append(m["name"])
    return drawn


def _real_tree() -> dict[str, tuple[str, type]]:
    """name -> (its first EoslabError base, the class) for every subclass the package defines."""
    _all_modules()  # import everything, so every subclass exists
    found: dict[str, tuple[str, type]] = {}
    todo = [eoslab.errors.EoslabError]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.startswith("eoslab.") and sub.__name__ not in found:
                parent = next(b for b in sub.__bases__ if issubclass(b, eoslab.errors.EoslabError))
                found[sub.__name__] = (parent.__name__, sub)
                todo.append(sub)
    return found


def test_the_exception_tree_is_drawn_whole():
    drawn, real = _drawn_tree(), _real_tree()
    assert {n: p for n, (p, _) in drawn.items()} == {n: p for n, (p, _) in real.items()}


def test_each_exception_is_exported_where_the_tree_says():
    real = _real_tree()
    for name, (_, module) in _drawn_tree().items():
        assert getattr(importlib.import_module(module), name, None) is real[name][1], f"{name} is not {module}.{name}"


@pytest.mark.parametrize(
    "name,families",
    [
        ("eoslab.UnknownNodeError", ("eoslab.ClusterError", "KeyError")),
        ("eoslab.WaitTimeout", ("TimeoutError",)),
        ("eoslab.PortInUseError", ("eoslab.SetupError",)),
        (
            "eoslab.protocol.JarNotFoundError",
            ("eoslab.protocol.ProtocolError", "eoslab.SetupError", "FileNotFoundError"),
        ),
        ("eoslab.protocol.KafkaConnectionError", ("eoslab.protocol.ProtocolError", "ConnectionError")),
        ("eoslab.runs.NoRunsError", ("eoslab.DataError", "FileNotFoundError")),
        ("eoslab.inspect.TransactionNotFound", ("eoslab.ClusterError",)),
        ("eoslab.java_client.JavaClientError", ("eoslab.ClientError",)),
    ],
)
def test_an_except_clause_of_before_still_catches(name, families):
    """Regrouping the tree changed parents, not what an existing ``except`` (a builtin's too) catches."""

    def resolve(dotted: str) -> type:
        module, _, attr = dotted.rpartition(".")
        found: type = getattr(importlib.import_module(module or "builtins"), attr)
        return found

    cls = resolve(name)
    for family in families:
        assert issubclass(cls, resolve(family)), f"{name} is no longer a {family}"


def test_the_runs_readers_say_no_runs_in_the_kits_words(tmp_path):
    import eoslab.analysis
    import eoslab.runs

    with pytest.raises(eoslab.runs.NoRunsError, match=r"^No runs under .*: run the Setup cell first\.$") as info:
        eoslab.runs.read_table("summary", tmp_path)
    assert isinstance(info.value, FileNotFoundError)  # what they raised before
    assert eoslab.analysis.NoRunsError is eoslab.runs.NoRunsError
