"""The JupyterLab that `make lab` starts: the repository root served, the index opened.

``jupyter lab notebooks/index.ipynb`` alone makes ``notebooks/`` the server's root, and then
``labs/`` and ``solutions/`` cannot be opened from the browser (the index's lab links lead
nowhere). So the root is given explicitly, and the index is the file to open. The browser
test builds its command line here too, so it tests exactly what a learner runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

INDEX = "notebooks/index.ipynb"


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
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # containers and CI run as root; Jupyter refuses it otherwise
    return [*argv, *extra, str(root / INDEX)]
