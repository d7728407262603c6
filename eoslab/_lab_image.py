"""The lab image (``eoslab/lab:<kit version>``): JupyterLab, Python, a JDK 17, the Docker CLI, the kit and its jars.

One Dockerfile (``eoslab/_resources/lab/Dockerfile``), two bases (its ``ARG BASE``):

- with a registry, ``docker compose --profile lab up`` builds it from the repository (the ``lab`` service's
  ``build:``) on the pinned public Debian base :data:`eoslab._compose_lab.REGISTRY_BASE`: PyPI and Maven
  Central inside the build;
- without one (CI here), :func:`build_lab_image` (``eoslab image ensure --lab``) builds it on
  :data:`eoslab._image.BASE_IMAGE` (debootstrap) with the pinned wheels (:func:`lab_requirements`, from pip's
  cache) and the resolved jars (~/.m2) in the context's ``.offline/``: the build needs no PyPI and no Maven.

Cached like ``eoslab/kafka``: the image's :data:`eoslab._image.CONTEXT_LABEL` is a digest of its inputs (the
kit's files, the pinned requirements, the jars, the base image), and an unchanged digest builds nothing.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from eoslab import _image, _jars
from eoslab._compose_lab import DOCKERFILE
from eoslab._paths import PACKAGE_DIR, project_root
from eoslab._version import __version__
from eoslab.errors import SetupError
from eoslab.topology import KAFKA_VERSION

LAB_IMAGE = f"eoslab/lab:{__version__}"


DEV_ONLY = frozenset({"ruff", "mypy", "radon", "mando", "playwright", "greenlet", "pyee", "uv"})
"""Pinned in the developer's environment (the ``dev`` extra, and uv, the Makefile's installer) but not needed to
run or grade the course: left out of the image (the tests, Playwright's browser driver, the linters and uv stay
on the developer's machine; the image installs with pip)."""

SKIP_DIRS = frozenset({"__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})


def _name(requirement: str) -> str:
    return re.split(r"[=<>@ ;\[]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def lab_requirements() -> list[str]:
    """The pinned requirements of this environment (``pip freeze``) minus :data:`DEV_ONLY`."""
    from eoslab.course import pinned_requirements

    return [r for r in pinned_requirements() if _name(r) not in DEV_ONLY]


def kit_files(root: Path) -> dict[str, bytes]:
    """The kit as the Dockerfile copies it: ``pyproject.toml``, ``README.md`` and ``eoslab/`` (no caches)."""
    files = {name: (root / name).read_bytes() for name in ("pyproject.toml", "README.md")}
    for path in sorted(PACKAGE_DIR.rglob("*")):
        rel = path.relative_to(PACKAGE_DIR)
        if path.is_file() and not SKIP_DIRS.intersection(rel.parts) and path.suffix != ".pyc":
            files[f"eoslab/{rel.as_posix()}"] = path.read_bytes()
    return files


def lab_jars() -> list[str]:
    """Every jar :func:`eoslab.course._workshop.bundle_jars` puts into the context (Kafka, Spark's Kafka source)."""
    import pyspark

    spark = _jars.resolve(
        "spark", {"spark.version": pyspark.__version__}, f"spark-kafka-{pyspark.__version__}.classpath"
    )
    return [*_jars.kafka_jars(), *spark]


def build_lab_image(*, force: bool = False, echo: _image.Echo = print) -> _image.ImageBuild:
    """Build :data:`LAB_IMAGE` on :data:`eoslab._image.BASE_IMAGE` unless an image of the same inputs is here."""
    from eoslab.course import build_wheels, bundle_jars

    root = project_root()
    if root is None:
        raise SetupError("The lab image is built from the course's repository: run this in a checkout of it.")
    start = time.monotonic()
    base_seconds = _image.ensure_base(force, echo)
    requirements = lab_requirements()
    files = kit_files(root)
    files[".offline/wheels/requirements.txt"] = ("\n".join(requirements) + "\n").encode()
    jars = lab_jars()
    digest = _image.context_digest(files, jars, _image.image_id(_image.BASE_IMAGE))

    def write(ctx: Path) -> None:
        echo(f"wheels for {len(requirements)} pinned requirements (pip's cache; PyPI for what it lacks) ...")
        build_wheels(requirements, ctx / ".offline" / "wheels")
        bundle_jars(ctx / ".offline" / "jars")
        for rel, data in files.items():
            (ctx / rel).parent.mkdir(parents=True, exist_ok=True)
            (ctx / rel).write_bytes(data)
        echo(f"docker build -> {LAB_IMAGE} (JDK 17, Python 3.11, docker CLI, the kit; BASE={_image.BASE_IMAGE}) ...")

    args = {"BASE": _image.BASE_IMAGE, "KAFKA_VERSION": KAFKA_VERSION}
    built = _image.build(LAB_IMAGE, digest, write, force=force, dockerfile=DOCKERFILE, build_args=args)
    return _image.ImageBuild(LAB_IMAGE, time.monotonic() - start, not built, base_seconds)
