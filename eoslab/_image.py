"""The Kafka image of the docker backend: which one runs, and the local one built here without a registry.

The committed ``docker-compose.yml`` names the official ``apache/kafka`` image. Where no registry is
reachable (CI here), :func:`build_image` builds ``eoslab/kafka:<version>`` that keeps the part of the
official image's contract the kit relies on, from the SAME pinned jars as the local backend
(:func:`eoslab._jars.kafka_jars`):

- ``CMD /etc/kafka/docker/run``: ``KAFKA_*`` variables become ``server.properties`` and the cluster id
  comes from ``CLUSTER_ID``, both done by ``kafka.docker.KafkaDockerWrapper`` from ``kafka_2.13-<v>.jar``
  (reused, not re-implemented); storage formatted on every start ("already formatted" is fine);
  a controller-only node refuses ``KAFKA_ADVERTISED_LISTENERS``;
- ``/opt/kafka/bin/kafka-*.sh`` for the tools the kit runs in a container, ``/var/lib/kafka/data`` as
  a volume, user ``appuser``, a Log4j2 binding that logs to stdout.

The base is a Debian bookworm ``minbase`` root file system (``debootstrap``, root only) turned into an
image by ``docker import``; Java 17 comes from Debian. Both images are cached: a build whose inputs
(jars, scripts, Dockerfile, base) are unchanged returns at once.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from eoslab import _jars
from eoslab._paths import PACKAGE_DIR
from eoslab.errors import SetupError
from eoslab.topology import KAFKA_IMAGE, KAFKA_VERSION

IMAGE_ENV = "EOSLAB_KAFKA_IMAGE"
"""Set it to run another image (a local build, a mirror's copy): compose and the docker backend follow."""

LOCAL_IMAGE = f"eoslab/kafka:{KAFKA_VERSION}"
BASE_IMAGE = "eoslab/debian:bookworm-minbase"
CONTEXT_LABEL = "org.eoslab.context"
RESOURCES = PACKAGE_DIR / "_resources" / "image"
DEBIAN_MIRROR = "http://deb.debian.org/debian"

SCRIPTS: dict[str, str] = {
    # /opt/kafka/bin/<script> -> the main class it runs (the official image's names for them).
    "kafka-storage.sh": "kafka.tools.StorageTool",
    "kafka-dump-log.sh": "org.apache.kafka.tools.DumpLogSegments",
    "kafka-transactions.sh": "org.apache.kafka.tools.TransactionsCommand",
    "kafka-metadata-quorum.sh": "org.apache.kafka.tools.MetadataQuorumCommand",
    "kafka-producer-perf-test.sh": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-get-offsets.sh": "org.apache.kafka.tools.GetOffsetShell",
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-features.sh": "org.apache.kafka.tools.FeatureCommand",
    "kafka-configs.sh": "org.apache.kafka.tools.ConfigCommand",
    "kafka-leader-election.sh": "org.apache.kafka.tools.LeaderElectionCommand",
    "kafka-cluster.sh": "org.apache.kafka.tools.ClusterTool",
    "kafka-console-producer.sh": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-console-consumer.sh": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-consumer-groups.sh": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
}

Echo = Callable[[str], None]


@dataclass(frozen=True)
class ImageBuild:
    """What :func:`build_image` did."""

    image: str
    seconds: float
    cached: bool
    base_seconds: float | None  # None: the base image was already here


def docker() -> str:
    found = shutil.which("docker")
    if found is None:
        raise SetupError("The `docker` command is not installed: install Docker (see docs/docker.md).")
    return found


def image_exists(name: str) -> bool:
    proc = subprocess.run([docker(), "image", "inspect", name], capture_output=True, text=True, timeout=60)
    return proc.returncode == 0


def pull(name: str, timeout: float = 900.0) -> bool:
    """``docker pull``: True when the image is here afterwards (no registry here: False at once)."""
    try:
        proc = subprocess.run([docker(), "pull", name], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return proc.returncode == 0


def image_label(name: str, label: str) -> str | None:
    proc = subprocess.run(
        [docker(), "image", "inspect", "--format", f'{{{{index .Config.Labels "{label}"}}}}', name],
        capture_output=True,
        text=True,
        timeout=60,
    )
    value = proc.stdout.strip()
    return value if proc.returncode == 0 and value not in ("", "<no value>") else None


def kafka_image() -> str:
    """The image the docker backend runs.

    ``$EOSLAB_KAFKA_IMAGE`` when set; else the official image if it is on this machine; else the
    local build if it is here; else the official image again (``docker compose`` pulls it).
    """
    if chosen := os.environ.get(IMAGE_ENV, "").strip():
        check_release(chosen)
        return chosen
    try:
        if image_exists(KAFKA_IMAGE):
            return KAFKA_IMAGE
        if image_exists(LOCAL_IMAGE):
            return LOCAL_IMAGE
    except (SetupError, OSError, subprocess.TimeoutExpired):
        pass
    return KAFKA_IMAGE


def image_release(name: str) -> str | None:
    """The Kafka release an image's tag names (``apache/kafka:4.1.2`` -> ``4.1.2``), or None (no version tag)."""
    ref = name.split("@", 1)[0]
    tag = ref.rsplit(":", 1)[1] if ":" in ref.rsplit("/", 1)[-1] else ""
    match = re.fullmatch(r"(\d+\.\d+\.\d+)(?:[-.].*)?", tag)
    return match.group(1) if match else None


def check_release(name: str) -> None:
    """Refuse, in one sentence, an image whose tag names another Kafka release than the pinned one.

    An image without a version tag (``latest``, a mirror's own name) is taken at its word.
    """
    release = image_release(name)
    if release is not None and release != KAFKA_VERSION:
        raise SetupError(
            f"The Kafka image {name} is Kafka {release}, but this kit is built for Kafka {KAFKA_VERSION}: "
            f"set {IMAGE_ENV}={KAFKA_IMAGE} (or {LOCAL_IMAGE}, `eoslab image build`), or unset it."
        )


# -- the build context ------------------------------------------------------------------------------------
def tool_script(main_class: str) -> str:
    return f'#!/usr/bin/env bash\nexec "$(dirname "$0")/kafka-run-class.sh" {main_class} "$@"\n'


STOP_SCRIPT = """#!/usr/bin/env bash
# SIGTERM the node of this container (a controlled shutdown), as Apache Kafka's kafka-server-stop.sh does.
pids=$(ps ax -o pid=,args= | grep 'kafka\\.Kafka' | grep java | grep -v grep | awk '{print $1}')
[ -n "$pids" ] || { echo "No kafka server to stop"; exit 1; }
kill -s TERM $pids
"""


def context_files() -> dict[str, bytes]:
    """Every file of the build context except the jars: relative path -> bytes."""
    files = {"Dockerfile": (RESOURCES / "Dockerfile").read_bytes()}
    for name in ("run", "cds-archive", "log4j2.yaml", "tools-log4j2.yaml", "server.properties"):
        files[f"docker/{name}"] = (RESOURCES / name).read_bytes()
    for name in ("kafka-run-class.sh", "kafka-server-start.sh"):
        files[f"bin/{name}"] = (RESOURCES / name).read_bytes()
    files["bin/kafka-server-stop.sh"] = STOP_SCRIPT.encode()
    for script, main_class in SCRIPTS.items():
        files[f"bin/{script}"] = tool_script(main_class).encode()
    return files


def context_digest(files: dict[str, bytes], jars: list[str], base_id: str) -> str:
    """A hash of everything the image is made of: equal digests, equal images."""
    h = hashlib.sha256(base_id.encode())
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name] + b"\0")
    for jar in sorted(jars, key=lambda j: Path(j).name):
        h.update(Path(jar).name.encode() + b"\0")
        with open(jar, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def write_context(folder: Path, files: dict[str, bytes], jars: list[str]) -> None:
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rel.startswith("bin/") or rel in ("docker/run", "docker/cds-archive"):
            path.chmod(0o755)
    libs = folder / "libs"
    libs.mkdir()
    for jar in jars:
        shutil.copy2(jar, libs / Path(jar).name)


# -- the base image -----------------------------------------------------------------------------------------
def build_base(echo: Echo = print) -> float:
    """``debootstrap --variant=minbase bookworm`` + ``docker import``: seconds taken."""
    if os.geteuid() != 0:
        raise SetupError(
            f"Building {BASE_IMAGE} runs debootstrap, which needs root: run `sudo .venv/bin/eoslab image build`, "
            f"or use the official image ({KAFKA_IMAGE}) where Docker Hub is reachable."
        )
    debootstrap = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if Path("/usr/sbin/debootstrap").exists() else None
    )
    if debootstrap is None:
        raise SetupError(
            "debootstrap is not installed: `apt-get install debootstrap` (tools/system/docker.sh does it), "
            f"or use the official image ({KAFKA_IMAGE})."
        )
    start = time.monotonic()
    mirror = os.environ.get("EOSLAB_DEBIAN_MIRROR", DEBIAN_MIRROR)
    with tempfile.TemporaryDirectory(prefix="eoslab-rootfs-", dir="/var/tmp") as tmp:
        root = Path(tmp) / "rootfs"
        echo(f"debootstrap --variant=minbase bookworm from {mirror} (about a minute) ...")
        proc = subprocess.run(
            [debootstrap, "--variant=minbase", "bookworm", str(root), mirror], capture_output=True, text=True
        )
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-5:])
            raise SetupError(f"debootstrap failed (is {mirror} reachable?): {tail}")
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for p in (root / junk).glob("*"):
                if p.is_file():
                    p.unlink()
        echo(f"docker import -> {BASE_IMAGE}")
        tar = subprocess.Popen(["tar", "-C", str(root), "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        imp = subprocess.run(
            [docker(), "import", "--change", 'CMD ["/bin/bash"]', "-", BASE_IMAGE],
            stdin=tar.stdout,
            capture_output=True,
            text=True,
        )
        if tar.stdout is not None:
            tar.stdout.close()
        tar.wait()
        if imp.returncode != 0 or tar.returncode != 0:
            raise SetupError(f"`docker import` of the bookworm root file system failed: {imp.stderr.strip()[-300:]}")
    return time.monotonic() - start


def image_id(name: str) -> str:
    proc = subprocess.run(
        [docker(), "image", "inspect", "--format", "{{.Id}}", name], capture_output=True, text=True, timeout=60
    )
    return proc.stdout.strip()


def build(
    image: str,
    digest: str,
    write: Callable[[Path], None],
    *,
    force: bool,
    dockerfile: str | None = None,
    build_args: dict[str, str] | None = None,
) -> bool:
    """``docker build`` of ``image`` from a context that ``write`` fills, unless the image here already carries
    ``digest`` (its :data:`CONTEXT_LABEL`): True when it built. The legacy builder (no buildx plugin needed);
    the build it replaces is removed (untagged by then)."""
    if not force and image_label(image, CONTEXT_LABEL) == digest:
        return False
    previous = image_id(image) if image_exists(image) else None
    with tempfile.TemporaryDirectory(prefix="eoslab-image-") as tmp:
        ctx = Path(tmp)
        write(ctx)
        cmd = [docker(), "build", "--label", f"{CONTEXT_LABEL}={digest}", "--tag", image]
        if dockerfile is not None:
            cmd += ["--file", str(ctx / dockerfile)]
        for key, value in (build_args or {}).items():
            cmd += ["--build-arg", f"{key}={value}"]
        if force:
            cmd.append("--no-cache")
        env = dict(os.environ, DOCKER_BUILDKIT="0")
        proc = subprocess.run([*cmd, str(ctx)], capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
            raise SetupError(f"`docker build` of {image} failed (is Debian's mirror reachable?):\n{tail}")
    if previous and previous != image_id(image):
        subprocess.run([docker(), "image", "rm", previous], capture_output=True, timeout=120)
    return True


def ensure_base(force: bool, echo: Echo) -> float | None:
    """:data:`BASE_IMAGE` built unless here (``force``: again): the seconds it took, None when it was here."""
    return build_base(echo) if force or not image_exists(BASE_IMAGE) else None


def build_image(*, force: bool = False, echo: Echo = print) -> ImageBuild:
    """Build :data:`LOCAL_IMAGE` unless an image of the same inputs is here already (``force``: rebuild)."""
    start = time.monotonic()
    jars = _jars.kafka_jars()
    _jars.check_single_log4j_binding(jars)
    base_seconds = ensure_base(force, echo)
    files = context_files()
    digest = context_digest(files, jars, image_id(BASE_IMAGE))

    def write(ctx: Path) -> None:
        write_context(ctx, files, jars)
        echo(f"docker build -> {LOCAL_IMAGE} (openjdk-17-jre-headless from Debian, {len(jars)} pinned jars) ...")

    built = build(LOCAL_IMAGE, digest, write, force=force)
    return ImageBuild(LOCAL_IMAGE, time.monotonic() - start, not built, base_seconds)
