"""The JupyterLab that `make lab` starts: the repository root served, the index opened.

``jupyter lab notebooks/index.ipynb`` alone makes ``notebooks/`` the server's root, and then
``labs/`` and ``solutions/`` cannot be opened from the browser (the index's lab links lead
nowhere). So the root is given explicitly, and the index is the file to open. The browser
test builds its command line here too, so it tests exactly what a learner runs; the lab
container runs it too (``eoslab lab --ip=0.0.0.0 --no-browser``).

It opens on the course: the file browser hides what the kit and the tools write beside it
(:data:`HIDE_GLOBS`, jupyter_server's ``ContentsManager.hide_globs``), and no "Would you like to get
notified about official Jupyter news?" toast covers the index on first open: :func:`lab_env` adds the
kit's ``labconfig/default_setting_overrides.json`` (``fetchNews: "false"``) to ``JUPYTER_CONFIG_PATH``,
which jupyterlab_server layers under the learner's own settings (``settings_utils._get_overrides``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

INDEX = "notebooks/index.ipynb"
DEFAULT_PORT = 8888
"""jupyter_server's default; when it is taken JupyterLab tries the next ones and prints the one it got."""

HIDE_GLOBS = (
    # jupyter_server's defaults (the option replaces them, so they are repeated)
    "__pycache__",
    "*.pyc",
    "*.pyo",
    ".DS_Store",
    "*~",
    # what the kit, pip and the tests write beside the course
    "*.egg-info",
    "kafka-data",
    "kafka-data-*",
    "runs",
    "build",
    "dist",
    "test-artifacts",
    "*.report.json",
)
"""Names (any depth) the file browser does not list; a notebook can still read them, and a learner can still
``ls kafka-data`` in a terminal or a cell, as module 00 does."""

JUPYTER_CONFIG = Path(__file__).resolve().parents[1] / "_resources" / "lab" / "jupyter"
"""A Jupyter config folder of the kit: ``labconfig/default_setting_overrides.json``."""


def course_root() -> Path:
    """The folder that holds notebooks/ and labs/: the checkout, or a workshop copy, or the cwd."""
    from eoslab._paths import project_root

    return project_root() or Path.cwd()


def lab_argv(root: Path | None = None, *extra: str) -> list[str]:
    """``python -m jupyterlab`` serving ``root`` and opening the index; ``extra`` go last (port, token...)."""
    root = (root or course_root()).resolve()
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={root}",
        # A classroom has poor Wi-Fi and an offline laptop none: no update check, no news feed.
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.news_url=None",
        *(f"--ContentsManager.hide_globs={glob}" for glob in HIDE_GLOBS),
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers and CI run as root; Jupyter refuses it otherwise
    return [*argv, *extra, str(root / INDEX)]


def lab_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment to run :func:`lab_argv` in: ``base`` (default ``os.environ``) with the kit's Jupyter
    config folder appended to ``JUPYTER_CONFIG_PATH``. It sets settings' defaults only: what a learner
    chooses in the Settings editor still wins."""
    env = dict(os.environ if base is None else base)
    paths = [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p]
    if str(JUPYTER_CONFIG) not in paths:
        paths.append(str(JUPYTER_CONFIG))
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(paths)
    return env


def lab_port(jupyter_args: list[str]) -> int:
    """The port JupyterLab tries first: ``--port=N`` / ``--port N`` / ``--ServerApp.port=N`` among its arguments, else
    8888."""
    for i, arg in enumerate(jupyter_args):
        name, _, value = arg.partition("=")
        if name in ("--port", "--ServerApp.port"):
            value = value or (jupyter_args[i + 1] if i + 1 < len(jupyter_args) else "")
            if value.isdigit():
                return int(value)
    return DEFAULT_PORT
