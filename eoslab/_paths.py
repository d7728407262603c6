"""Where the kit keeps things: the learner-browsable data folder and the cache."""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def project_root() -> Path | None:
    """The checkout this package runs from, if it runs from one."""
    root = PACKAGE_DIR.parent
    return root if (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir() else None


def data_dir() -> Path:
    """The cluster's folder: one sub-folder per node with its data, log and pid file.

    ``$EOSLAB_DATA`` wins; in a checkout it is ``kafka-data/`` beside README.md
    (gitignored), so learners can ``ls kafka-data/broker-1/data/demo-0``.
    """
    if env := os.environ.get("EOSLAB_DATA"):
        return Path(env).expanduser().resolve()
    root = project_root()
    if root is not None:
        return root / "kafka-data"
    return Path.home() / ".local" / "share" / "eoslab" / "kafka-data"


def cache_dir() -> Path:
    """Resolved classpaths; kept between runs (Maven keeps the jars in ~/.m2)."""
    base = os.environ.get("EOSLAB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache", "eoslab"
    )
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def offline_dir() -> Path | None:
    """The workshop bundle's payload (``eoslab workshop pack``): wheels, jars, docker image tars.

    ``$EOSLAB_OFFLINE`` wins; in a checkout or a workshop copy it is ``.offline/`` beside README.md.
    None when there is none: then Maven and pip fetch as usual.
    """
    if env := os.environ.get("EOSLAB_OFFLINE"):
        path = Path(env).expanduser().resolve()
        return path if path.is_dir() else None
    root = project_root()
    if root is not None and (root / ".offline").is_dir():
        return root / ".offline"
    return None


def pom_dir(name: str) -> Path:
    """``eoslab/_java/<name>/pom.xml``: shipped inside the package, so an install has it too."""
    return PACKAGE_DIR / "_java" / name


def clients_dir() -> Path:
    """Pid files of client processes a demo started (a zombie producer); `heal` ends them."""
    path = data_dir() / "clients"
    path.mkdir(parents=True, exist_ok=True)
    return path
