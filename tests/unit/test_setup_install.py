"""The set-up's installer: pip installs uv (one pinned wheel), uv installs the kit. The workshop's offline bundle
carries that pin whatever installed the environment it packs; the lab image, which installs with pip, leaves uv out."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from eoslab._lab_image import lab_requirements
from eoslab.course._workshop import UV, pinned_requirements

ROOT = Path(__file__).resolve().parents[2]


def test_the_makefile_installs_the_pinned_uv_and_uv_installs_the_kit() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert f"-m pip install --quiet $(PIP_FROM) '{UV}'" in makefile
    # --compile-bytecode: where PYTHONDONTWRITEBYTECODE is set, nothing else ever writes the packages' .pyc files
    install = "UV_INSTALL = $(BIN)/uv pip install --system-certs --compile-bytecode --python $(BIN)/python $(PIP_FROM)"
    assert install in makefile
    assert "\t$(UV_INSTALL) -e '.[dev]'" in makefile


def _freeze(monkeypatch: pytest.MonkeyPatch, lines: list[str]) -> None:
    def run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        out = "23.2.1\n" if argv[1] == "-c" else "\n".join(lines) + "\n"
        return subprocess.CompletedProcess(argv, 0, stdout=out)

    monkeypatch.setattr("eoslab.course._workshop.subprocess.run", run)


def test_a_bundle_holds_the_makefiles_uv_even_from_an_environment_pip_installed(monkeypatch) -> None:
    _freeze(monkeypatch, ["pyspark==4.2.0", "eoslab==0.1.0"])  # a conda environment: no uv in it
    assert pinned_requirements() == ["pyspark==4.2.0", UV, "pip==23.2.1", "setuptools>=77"]
    _freeze(monkeypatch, ["pyspark==4.2.0", UV])  # the Makefile's venv: its own uv, once
    assert pinned_requirements() == ["pyspark==4.2.0", UV, "pip==23.2.1", "setuptools>=77"]


def test_the_lab_image_installs_without_uv(monkeypatch) -> None:
    _freeze(monkeypatch, ["pyspark==4.2.0", UV, "ruff==0.17.6"])
    assert lab_requirements() == ["pyspark==4.2.0", "pip==23.2.1", "setuptools>=77"]
