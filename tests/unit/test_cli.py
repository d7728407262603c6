"""`eoslab`'s command line without a cluster: how the parser is assembled from the command modules, and
the exit codes of the paths that stop before touching one."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from eoslab import cli
from eoslab.cli import _bench, _cluster, _course, _grade, _image, _kit
from eoslab.cli._common import backend_name

MODULES = (_cluster, _kit, _course, _grade, _image, _bench)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_help_order_lists_every_command_module_subcommand_once() -> None:
    names = [name for module in MODULES for name in module.PARSERS]
    assert len(names) == len(set(names)), "two command modules register the same subcommand"
    assert sorted(cli.HELP_ORDER) == sorted(names)
    assert list(_subcommands(cli.build_parser())) == list(cli.HELP_ORDER)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_each_subcommand_runs_a_handler_of_its_own_module_named_for_it(module: ModuleType) -> None:
    sub = _subcommands(cli.build_parser())
    for name in module.PARSERS:
        handler = sub[name].get_default("func")
        assert handler.__name__ == f"cmd_{name}"
        assert handler.__module__ == module.__name__, f"{name}'s handler lives apart from its parser"


def test_python_dash_m_runs_the_same_main() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "eoslab.cli", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: eoslab ") and "bench" in proc.stdout


def test_unknown_arguments_are_refused_except_for_lab(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli.main(["status", "--port=8890"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --port=8890" in capsys.readouterr().err


def test_grade_without_a_notebook_or_class_says_what_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["grade"]) == 2
    assert capsys.readouterr().err == (
        "eoslab: give a lab notebook (eoslab grade labs/lab01_idempotence.ipynb) or --class DIR.\n"
    )


@pytest.mark.parametrize(
    "option,value,said",
    [
        ("--faults", "kill_processor,nope", "--faults: unknown nope; use some of "),
        ("--kinds", "zz", "--kinds: unknown zz"),
    ],
)
def test_bench_faults_refuses_an_unknown_name_before_needing_a_cluster(
    capsys: pytest.CaptureFixture[str], option: str, value: str, said: str
) -> None:
    assert cli.main(["--backend", "local", "bench", "faults", option, value]) == 2
    assert capsys.readouterr().err.startswith(said)


def test_bench_with_a_name_the_parser_would_refuse_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(what="nope", backend=None)
    assert _bench.cmd_bench(args) == 2
    assert "unknown benchmark 'nope'" in capsys.readouterr().err


def test_render_writes_the_compose_file_and_check_fails_on_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "compose.yml"
    assert cli.main(["render", "-o", str(out)]) == 0
    assert cli.main(["render", "--check", "-o", str(out)]) == 0
    out.write_text(out.read_text() + "# edited\n")
    assert cli.main(["render", "--check", "-o", str(out)]) == 1
    assert "differs from the topology: run `eoslab render`." in capsys.readouterr().err


def test_backend_name_follows_the_option_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EOSLAB_BACKEND", "Docker")
    assert backend_name(argparse.Namespace(backend=None)) == "docker"
    assert backend_name(argparse.Namespace(backend="local")) == "local"
    monkeypatch.delenv("EOSLAB_BACKEND")
    assert backend_name(argparse.Namespace(backend=None)) == "local"
