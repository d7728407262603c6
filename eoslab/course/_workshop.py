"""``eoslab workshop pack DIR``: the course for a classroom with poor Wi-Fi, installable with no network.

An instructor packs once, on a machine like the learners' laptops (same OS, CPU and Python: the
wheels of pandas, pyarrow, confluent-kafka... are built for one platform). ``DIR`` then holds:

``learner/``
    the course without ``solutions/``, ``tests/`` (the tests hold the answers), ``docs/instructor.md`` and
    ``instructor/`` (the class notebook), and
    ``.offline/``: ``wheels/`` (every pinned Python dependency, and uv, pip and setuptools to install
    the kit), ``jars/`` (the resolved Kafka and Spark-Kafka jars with their classpath order) and,
    when asked, ``docker/`` (the cluster's image as a ``docker save`` tar). Copy this folder to each
    laptop: ``make lab`` there installs from ``.offline/`` (``--no-index``: pip installs uv, uv the
    kit; no Maven) and works with the network off.
``instructor/``
    the same plus ``solutions/``, ``tests/`` and ``instructor/``; labs stay generated from the solutions
    (``eoslab labs``), and the pack refuses labs that have drifted from them.

Both copies share the payload through hard links, so the bundle costs its size once on disk.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from eoslab._paths import PACKAGE_DIR
from eoslab.errors import SetupError

LEARNER_EXCLUDES = ("solutions/", "tests/", "conftest.py", ".ci/", "docs/instructor.md", "instructor/")
"""Not in the learner's copy: the solutions, the tests (they hold the answers and wrong answers) and the root
``conftest.py`` that wires them (it loads ``tests.*``: without ``tests/`` every pytest in the copy, `eoslab grade`'s
included, would stop at start-up), the instructor guide (it tells each lab's wrong answers in words), and
``instructor/`` (the class notebook: it reads the whole class's hand-ins, which a learner never has)."""

BUILD_REQUIREMENTS = ("setuptools>=77",)
"""What ``pip install -e .`` needs to build the kit itself (pyproject's build-system), offline too."""

UV = "uv==0.13.9"
"""The installer of the Makefile's set-up (pip installs it, it installs the kit and its dependencies): in every
bundle, whatever installed the environment packed (a conda environment's pip has not)."""


CI_WORKFLOW = ".github/workflows/classroom.yml"
"""Where both copies get the grading workflow (``eoslab/_resources/grade-workflow.yml``): a class that hands in
through git (GitHub Classroom) has each push graded by the kit's own commands, its points per lab task reported
to the Classroom's dashboard (the name GitHub Classroom gives its own autograding workflow). Not in the kit's own
repository's ``.github/``: there every push would grade the unsolved labs."""


def write_ci_workflow(dest: Path) -> Path:
    """Write the grading workflow into the course copy ``dest``."""
    target = dest / CI_WORKFLOW
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PACKAGE_DIR / "_resources" / "grade-workflow.yml", target)
    return target


SITE = "build/site"
"""Where `make site` writes the course as a website (tools/site_build.py): the pack carries it, for reading offline."""


def copy_site(root: Path, dests: list[Path]) -> bool:
    """The built website of ``root`` (if `make site` built one) into ``site/`` of each copy: True when copied."""
    built = root / SITE
    if not (built / "index.html").is_file():
        return False
    for dest in dests:
        shutil.copytree(built, dest / "site")
    return True


@dataclass
class PackResult:
    root: str
    learner: str
    instructor: str
    wheels: int
    wheels_mb: float
    jars: dict[str, int]
    docker_images: list[str]
    seconds: dict[str, float] = field(default_factory=dict)
    site: bool = False

    def summary(self) -> str:
        jars = ", ".join(f"{k}: {v}" for k, v in self.jars.items())
        imgs = ", ".join(self.docker_images) or "none (local backend; --docker-image NAME adds one)"
        took = ", ".join(f"{k} {v:.0f} s" for k, v in self.seconds.items())
        site = (
            "the course as a website, for reading offline: site/index.html in both copies"
            if self.site
            else f"no website: `make site` builds it ({SITE}/), and the next pack carries it"
        )
        return (
            f"learner copy (no solutions, no tests, no class notebook): {self.learner}\n"
            f"instructor copy (with solutions, tests and instructor/): {self.instructor}\n"
            f"wheels: {self.wheels} ({self.wheels_mb:.0f} MB); jars: {jars}; docker images: {imgs}\n"
            f"took: {took}\n"
            f"{site}\n"
            "On each laptop: copy the learner folder, then `make lab` in it (no network needed; Java 17+ and "
            "Python 3.10+ must be installed).\n"
            f"Hand-in through git: both copies carry {CI_WORKFLOW}, which grades each push's changed labs "
            'and reports their points to GitHub Classroom (docs/instructor.md, "Hand-in through git").'
        )


def _git_files(root: Path) -> list[str] | None:
    """What git tracks or would track under ``root`` (not ignored); None without git or a repository."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return None
    return [f for f in out.split("\0") if f]


_WALK_SKIPS = {".git", ".venv", "kafka-data", "runs", "__pycache__", ".offline", ".ipynb_checkpoints", "test-artifacts"}


def _walked_files(root: Path) -> list[str]:
    """Every file under ``root`` but those of :data:`_WALK_SKIPS` and ``*.egg-info`` folders."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _WALK_SKIPS and not d.endswith(".egg-info")]
        found += [str((Path(dirpath) / name).relative_to(root)) for name in filenames]
    return sorted(found)


def course_files(root: Path) -> list[str]:
    """The course's files, relative to ``root``: what git tracks or would (not ignored), or (no git) a walk."""
    files = _git_files(root)
    if files:
        return sorted(f for f in files if (root / f).is_file())
    return _walked_files(root)


def learner_files(files: list[str]) -> list[str]:
    """What of the course's ``files`` (:func:`course_files`) goes into the learner's copy."""
    return [f for f in files if not f.startswith(LEARNER_EXCLUDES)]


def _copy_tree(root: Path, files: list[str], dest: Path) -> None:
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)


def _link_tree(src: Path, dest: Path) -> None:
    """Hard-link ``src`` into ``dest`` (copy where links are not possible: another file system)."""
    for dirpath, _, filenames in os.walk(src):
        for name in filenames:
            s = Path(dirpath) / name
            d = dest / s.relative_to(src)
            d.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(s, d)
            except OSError:
                shutil.copy2(s, d)


def pinned_requirements(python: str = sys.executable) -> list[str]:
    """The exact versions installed in this environment (``pip freeze``), the kit itself left out."""
    out = subprocess.run(
        [python, "-m", "pip", "freeze", "--exclude-editable"], capture_output=True, text=True, check=True
    ).stdout
    reqs = [ln.strip() for ln in out.splitlines() if ln.strip() and not ln.startswith(("#", "-e "))]
    reqs = [r for r in reqs if not re.match(r"^eoslab(\s|=|@|$)", r)]
    pip_version = subprocess.run(
        [python, "-c", "import pip; print(pip.__version__)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    uv = [] if any(re.match(r"^uv(\s|=|$)", r) for r in reqs) else [UV]
    return [*reqs, *uv, f"pip=={pip_version}", *BUILD_REQUIREMENTS]


def build_wheels(requirements: list[str], dest: Path, python: str = sys.executable) -> None:
    """Wheels for every requirement (sdists such as pyspark are built here: they are pure Python)."""
    from eoslab._progress import progress_bar

    dest.mkdir(parents=True, exist_ok=True)
    lock = dest / "requirements.txt"
    lock.write_text("\n".join(requirements) + "\n")
    cmd = [python, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(dest), "-r", str(lock)]
    lines: list[str] = []
    with progress_bar("wheels for the pinned dependencies", total=len(requirements), unit=" wheels", delay=0) as bar:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith(("Saved ", "File was already downloaded", "  Stored in directory")):
                bar.update(1)
            else:
                bar.update(0)
        proc.wait()
    if proc.returncode != 0:
        tail = "".join(lines[-12:])
        raise SetupError(f"pip could not build the wheels (is the package index reachable?):\n{tail}")


def bundle_jars(dest: Path) -> dict[str, int]:
    """The Kafka jars and the Spark Kafka source, each with its classpath order (``classpath.txt``)."""
    import pyspark

    from eoslab import _jars
    from eoslab.topology import KAFKA_VERSION

    sets = {
        f"kafka-{KAFKA_VERSION}": _jars.kafka_jars(),
        f"spark-kafka-{pyspark.__version__}": _jars.resolve(
            "spark", {"spark.version": pyspark.__version__}, f"spark-kafka-{pyspark.__version__}.classpath"
        ),
    }
    counts = {}
    for name, jars in sets.items():
        folder = dest / name
        folder.mkdir(parents=True, exist_ok=True)
        names = [Path(j).name for j in jars]
        if len(set(names)) != len(names):
            raise SetupError(f"Two jars of {name} share a file name: the bundle cannot hold them side by side.")
        for j in jars:
            shutil.copy2(j, folder / Path(j).name)
        (folder / _jars.BUNDLE_LIST).write_text("\n".join(names) + "\n")
        counts[name] = len(jars)
    return counts


def save_docker_images(images: list[str], dest: Path) -> list[str]:
    """``docker save`` each image into ``dest`` (the docker backend's image, built elsewhere)."""
    if not images:
        return []
    docker = shutil.which("docker")
    if docker is None:
        raise SetupError("--docker-image needs the docker command: install Docker, or pack without the image.")
    dest.mkdir(parents=True, exist_ok=True)
    saved = []
    for image in images:
        tar = dest / (re.sub(r"[^\w.-]+", "_", image) + ".tar")
        proc = subprocess.run([docker, "save", "-o", str(tar), image], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SetupError(
                f"docker save {image} failed ({proc.stderr.strip()[:200]}): build or pull the image first."
            )
        saved.append(image)
    return saved


def load_docker_images(offline: Path, docker: str | None = None) -> list[str]:
    """On a laptop: ``docker load`` every image tar of the bundle (a no-op without ``.offline/docker``)."""
    tars = sorted((offline / "docker").glob("*.tar"))
    docker = docker or shutil.which("docker")
    if not tars or docker is None:
        return []
    loaded = []
    for tar in tars:
        proc = subprocess.run([docker, "load", "-i", str(tar)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SetupError(f"docker load -i {tar} failed ({proc.stderr.strip()[:200]}): is Docker running?")
        loaded.append(tar.name)
    return loaded


def pack(
    dest: Path,
    *,
    root: Path,
    docker_images: list[str] | None = None,
    wheels: bool = True,
    progress: Callable[[str], None] = print,
) -> PackResult:
    """Write ``dest/learner`` and ``dest/instructor`` (see the module docstring)."""
    from eoslab.classroom import generate_labs

    dest = dest.resolve()
    learner, instructor = dest / "learner", dest / "instructor"
    for d in (learner, instructor):
        if d.exists() and any(d.iterdir()):
            raise SetupError(f"{d} is not empty: give a new folder (or delete it) so old files cannot mix in.")
    drifted = generate_labs(root, check=True)
    if drifted:
        raise SetupError(f"labs differ from their solutions ({', '.join(map(str, drifted))}): run `eoslab labs`.")
    seconds: dict[str, float] = {}
    t = time.monotonic()
    files = course_files(root)
    _copy_tree(root, learner_files(files), learner)
    _copy_tree(root, files, instructor)
    for copy in (learner, instructor):
        write_ci_workflow(copy)
    site = copy_site(root, [learner, instructor])
    seconds["course"] = time.monotonic() - t

    offline = learner / ".offline"
    n_wheels, wheels_mb = 0, 0.0
    if wheels:
        t = time.monotonic()
        progress("Building wheels for every pinned dependency (pyspark is ~430 MB; pip's cache helps) ...")
        build_wheels(pinned_requirements(), offline / "wheels")
        whl = list((offline / "wheels").glob("*.whl"))
        n_wheels, wheels_mb = len(whl), sum(p.stat().st_size for p in whl) / 2**20
        seconds["wheels"] = time.monotonic() - t
    t = time.monotonic()
    progress("Copying the resolved Kafka and Spark-Kafka jars ...")
    jars = bundle_jars(offline / "jars")
    seconds["jars"] = time.monotonic() - t
    images = save_docker_images(list(docker_images or []), offline / "docker")
    _link_tree(offline, instructor / ".offline")
    result = PackResult(str(dest), str(learner), str(instructor), n_wheels, wheels_mb, jars, images, seconds, site)
    (dest / "bundle.json").write_text(json.dumps(asdict(result), indent=2) + "\n")
    return result
