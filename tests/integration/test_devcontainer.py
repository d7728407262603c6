"""The course in a dev container (.devcontainer/devcontainer.json), as Codespaces or VS Code starts it: the
dev-containers reference CLI (``@devcontainers/cli``, from npm) runs ``devcontainer up`` on a fresh clone, then,
inside the container, the cluster on the local backend (no Docker socket in it), JupyterLab answering on the
forwarded port, notebook 01 under nbval and lab 01's solution graded at full marks.

Where no registry serves the Dockerfile's public Debian base (this machine, CI), the clone's configuration is
overridden in one field only, the build argument ``BASE`` (the kit's debootstrap base, as ``eoslab image ensure
--lab`` builds the lab image), and the clone gets the pinned wheels and jars in ``.offline/`` (the workshop
copy's layout, which the Dockerfile uses instead of PyPI and Maven). The container and its image carry this
test's label and are removed at the end. Skipped, saying why, where the CLI cannot run (no Docker engine, no
Node.js/npm, or npm cannot install it).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from eoslab import _image
from eoslab._paths import cache_dir
from eoslab.cluster import docker_available

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
CLI_VERSION = "0.89.0"
LABEL = "org.eoslab.test"
LAB01 = "lab01_idempotence.ipynb"


def _cli() -> Path:
    """The dev-containers CLI, installed once from npm into the kit's cache (skips, saying why, where it cannot)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("no Node.js/npm on this machine: the dev-containers CLI (@devcontainers/cli) is an npm package")
    if (why := docker_available()) is not None:
        pytest.skip(f"{why}: `devcontainer up` builds and runs the course's container in a Docker engine")
    prefix = cache_dir() / f"devcontainers-cli-{CLI_VERSION}"
    cli = prefix / "node_modules" / ".bin" / "devcontainer"
    if not cli.is_file():
        proc = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(prefix), f"@devcontainers/cli@{CLI_VERSION}"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if proc.returncode != 0:
            pytest.skip(f"npm could not install @devcontainers/cli@{CLI_VERSION}: {proc.stderr.strip()[-300:]}")
    return cli


def _clone(tmp: Path) -> Path:
    """A fresh clone of this commit, with the pinned wheels and jars in .offline/ (no registry in the build)."""
    from eoslab._lab_image import lab_requirements
    from eoslab.course import build_wheels, bundle_jars

    course = tmp / "eoslab"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(course)], check=True, timeout=300)
    wheels = course / ".offline" / "wheels"
    requirements = lab_requirements()
    build_wheels(requirements, wheels)  # writes wheels/requirements.txt, which the Dockerfile installs
    bundle_jars(course / ".offline" / "jars")
    return course


def _override(course: Path) -> Path:
    """The clone's own configuration with one change: the Dockerfile's ``BASE``, where no registry serves it."""
    import json5  # JSON with comments, as devcontainer.json is (JupyterLab's server depends on it)

    config = json5.loads((course / ".devcontainer" / "devcontainer.json").read_text())
    if not _image.pull(_registry_base(), timeout=120):
        _image.ensure_base(False, print)
        config["build"]["args"] = {"BASE": _image.BASE_IMAGE}
    path = course / ".devcontainer" / "test-override.json"
    path.write_text(json.dumps(config, indent=1))
    return path


def _registry_base() -> str:
    from eoslab._compose_lab import REGISTRY_BASE

    return REGISTRY_BASE


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def devcontainer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    """``devcontainer up`` on a fresh clone: the CLI, the clone and the container's label; removed at the end."""
    cli = _cli()
    course = _clone(tmp_path_factory.mktemp("devcontainer"))
    label = f"{LABEL}={uuid.uuid4().hex[:12]}"
    argv = [str(cli), "up", "--workspace-folder", str(course), "--override-config", str(_override(course))]
    argv += ["--id-label", label, "--log-format", "json"]
    t0 = time.monotonic()
    try:
        up = _run(argv, timeout=2400)
        took = time.monotonic() - t0
        ids = _run(["docker", "ps", "-aq", "--filter", f"label={label}"], timeout=60).stdout.split()
        assert up.returncode == 0 and ids, up.stdout[-3000:] + up.stderr[-3000:]
        outcome = json.loads(up.stdout.strip().splitlines()[-1])
        assert outcome["outcome"] == "success", outcome
        print(f"devcontainer up (build + create + postCreate/postStart): {took:.0f} s")
        yield cli, course, label
    finally:  # whatever happened, nothing of this test is left in the engine
        ids = _run(["docker", "ps", "-aq", "--filter", f"label={label}"], timeout=60).stdout.split()
        images = {_run(["docker", "inspect", "-f", "{{.Image}}", i], timeout=60).stdout.strip() for i in ids}
        for i in ids:
            _run(["docker", "rm", "-f", i], timeout=120)
        for img in images - {""}:
            _run(["docker", "rmi", "-f", img], timeout=300)


def _exec(dc: tuple[Path, Path, str], script: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``devcontainer exec``: the container is found by the label ``up`` gave it, as the CLI finds its own."""
    cli, course, label = dc
    argv = [str(cli), "exec", "--workspace-folder", str(course), "--override-config"]
    argv += [str(course / ".devcontainer" / "test-override.json"), "--id-label", label, "bash", "-c", script]
    return _run(argv, timeout=timeout)


@pytest.mark.timeout(3600)  # the image's first build (~10 min here), the cluster, notebook 01 (~5 min), lab 01
def test_the_course_runs_and_grades_in_its_dev_container(devcontainer: tuple[Path, Path, str]) -> None:
    (container,) = _run(["docker", "ps", "-q", "--filter", f"label={devcontainer[2]}"], timeout=60).stdout.split()
    mounts = _run(["docker", "inspect", "-f", "{{json .Mounts}}", container], timeout=60).stdout
    assert "docker.sock" not in mounts, mounts  # the cluster runs in the container, not through the host's engine
    script = (
        "kcat -V | sed -n 4p | cut -d' ' -f2; echo $EOSLAB_BACKEND; python -c 'import eoslab; print(eoslab.__file__)'"
    )
    env = _exec(devcontainer, script, 120)
    kcat, backend, kit = env.stdout.split()[-3:]
    assert backend == "local" and kit.startswith("/workspaces/eoslab/"), env.stdout + env.stderr  # the repo's kit
    assert kcat == "1.7.1", env.stdout  # the lab image's kcat: module 04's optional cell runs there
    lab = _exec(  # postStartCommand's JupyterLab, after `eoslab up`: the forwarded port answers
        devcontainer,
        'for i in $(seq 1 300); do python -c "import urllib.request as u; '
        "u.urlopen('http://127.0.0.1:8888/api/status', timeout=5)\" 2>/dev/null && exit 0; sleep 1; done; "
        "cat /tmp/eoslab-lab.log; exit 1",
        420,
    )
    assert lab.returncode == 0, lab.stdout[-3000:]
    nb01 = _exec(
        devcontainer,
        "python -m pytest notebooks/01_idempotent_producer.ipynb --nbval-lax --nbval-current-env "
        "--nbval-cell-timeout=120 -p no:cacheprovider -q",
        1500,
    )
    assert nb01.returncode == 0, nb01.stdout[-5000:]
    graded = _exec(devcontainer, f"cp solutions/{LAB01} /tmp/{LAB01} && eoslab grade /tmp/{LAB01}", 900)
    assert graded.returncode == 0, graded.stdout[-4000:]  # 0 only at full marks
    assert re.search(rf"{re.escape(LAB01)}: (\d+) / \1 points", graded.stdout), graded.stdout
    _fits_its_host_requirements(devcontainer)


def _fits_its_host_requirements(dc: tuple[Path, Path, str]) -> None:
    """The container's peak memory (its cgroup's, over the cluster, JupyterLab, notebook 01 and the grading) is
    within the ``hostRequirements`` it asks Codespaces for, with a quarter left for the editor and the system."""
    import json5

    wanted = json5.loads((dc[1] / ".devcontainer" / "devcontainer.json").read_text())["hostRequirements"]
    peak = _exec(
        dc, "cat /sys/fs/cgroup/memory.peak 2>/dev/null || cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes", 60
    )
    gib = int(peak.stdout.split()[-1]) / 2**30
    print(f"dev container: peak memory {gib:.2f} GiB; hostRequirements {wanted}")
    assert gib < 0.75 * int(wanted["memory"].removesuffix("gb")), (gib, wanted)
