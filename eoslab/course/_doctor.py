"""``eoslab doctor``: is this machine ready for the course? One line per thing, ok or what to do.

The index's first cell and ``eoslab doctor`` run the same checks. Each check answers
in one line; a failure says, in one sentence, what to do. ``required`` checks make
the command fail; the others (Docker, Chromium) only matter for what they name.
"""

from __future__ import annotations

import html
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from eoslab.topology import KAFKA_VERSION, TOPOLOGY, Topology

MIN_FREE_MB = 3000
"""Six JVMs at their heaps (3 x 512 MB + 3 x 192 MB) plus metaspace and the kernel: ~2.5-3 GB."""
MIN_DISK_MB = 1000
"""Jars (~150 MB), the CDS archive (~60 MB), the cluster's logs and the bench runs."""


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    found: str
    todo: str = ""  # one sentence: what to do (empty when ok)
    required: bool = True

    @property
    def mark(self) -> str:
        return "ok" if self.ok else ("FAIL" if self.required else "note")

    def line(self) -> str:
        return f"{self.mark:<5} {self.name:<14} {self.found}" + (f" -> {self.todo}" if self.todo else "")


class Report(list):  # type: ignore[type-arg]
    """The checks, printable (`eoslab doctor`) and shown as a table in a notebook."""

    @property
    def ready(self) -> bool:
        return all(c.ok or not c.required for c in self)

    def __str__(self) -> str:
        verdict = "ready for the course." if self.ready else "NOT ready: fix the FAIL lines above."
        return "\n".join([*(c.line() for c in self), f"This machine is {verdict}"])

    def _repr_html_(self) -> str:
        colour = {"ok": "#1a7f37", "FAIL": "#c00", "note": "#9a6700"}
        rows = "".join(
            f"<tr><td style='color:{colour[c.mark]};font-weight:bold'>{c.mark}</td><td>{html.escape(c.name)}</td>"
            f"<td style='text-align:left'>{html.escape(c.found)}</td>"
            f"<td style='text-align:left'>{html.escape(c.todo)}</td></tr>"
            for c in self
        )
        verdict = "ready for the course" if self.ready else "<b>not ready</b>: fix the FAIL lines"
        return (
            "<table><thead><tr><th></th><th>check</th><th style='text-align:left'>found</th>"
            f"<th style='text-align:left'>what to do</th></tr></thead><tbody>{rows}</tbody></table>"
            f"<p>This machine is {verdict}.</p>"
        )


def check_python() -> Check:
    v = sys.version_info
    found = f"Python {v.major}.{v.minor}.{v.micro} ({sys.executable})"
    if v >= (3, 10):
        return Check("Python", True, found)
    return Check("Python", False, found, "Install Python 3.10 or newer, or use `conda env create -f environment.yml`.")


def check_java() -> Check:
    from eoslab import _java
    from eoslab.errors import SetupError

    try:
        java = _java.java_executable()
    except SetupError as exc:
        return Check("Java", False, "no usable Java", str(exc))
    found = f"Java {_java.java_major(java)} ({java}); Kafka {KAFKA_VERSION} and PySpark need 17+"
    try:
        _java.javac_executable()
    except SetupError as exc:  # a JRE runs the cluster, but module 03 compiles its Java client
        return Check("Java", False, f"{found}; no javac (a JRE, not a JDK)", str(exc))
    return Check("Java", True, found + ", module 03's Java client a JDK (javac)")


def _cluster_rss_mb(topology: Topology) -> float:
    """Memory the running cluster already holds (it counts as available to the cluster)."""
    from eoslab._paths import data_dir

    root, total = f"{data_dir()}{os.sep}", 0.0  # its own folder, not kafka-data-gw1 beside it
    for proc in psutil.process_iter(["cmdline", "memory_info"]):
        cmd = proc.info["cmdline"] or []
        if "kafka.Kafka" in cmd and any(root in part for part in cmd) and proc.info["memory_info"]:
            total += proc.info["memory_info"].rss / 2**20
    return total


def check_memory(topology: Topology = TOPOLOGY) -> Check:
    free = psutil.virtual_memory().available / 2**20
    held = _cluster_rss_mb(topology)
    found = f"{free:,.0f} MB available" + (f" (+ {held:,.0f} MB held by the running cluster)" if held else "")
    if free + held >= MIN_FREE_MB:
        return Check("memory", True, found)
    return Check(
        "memory", False, found, f"Close programs until {MIN_FREE_MB:,} MB are free: the six Kafka JVMs need about that."
    )


def _port_owner(port: int) -> tuple[int | None, str]:
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN:
                if conn.pid is None:
                    return None, "another process"
                try:
                    proc = psutil.Process(conn.pid)
                    return conn.pid, " ".join(proc.cmdline()) or proc.name()
                except psutil.Error:
                    return conn.pid, f"pid {conn.pid}"
    except (psutil.Error, OSError):
        pass
    return None, "another process"


def check_ports(topology: Topology = TOPOLOGY) -> Check:
    from eoslab._paths import data_dir
    from eoslab._ports import is_free

    ports = topology.all_ports()
    lo, hi = min(ports), max(ports)
    ours, theirs = 0, []
    for port, owner in sorted(ports.items()):
        if is_free(port):
            continue
        pid, cmd = _port_owner(port)
        # The running eoslab cluster (a JVM of this data folder) or its fault proxy holds its own ports.
        if str(data_dir()) in cmd or "eoslab.faults" in cmd:
            ours += 1
        else:
            theirs.append(f"{port} ({owner}) by {f'pid {pid}' if pid else cmd}")
    found = f"{len(ports)} ports {lo}-{hi}" + (f", {ours} held by this eoslab cluster" if ours else " free")
    if not theirs:
        return Check("ports", True, found)
    offset = int(os.environ.get("EOSLAB_PORT_OFFSET", "0") or 0)
    return Check(
        "ports",
        False,
        f"taken: {'; '.join(theirs[:3])}" + (f" and {len(theirs) - 3} more" if len(theirs) > 3 else ""),
        f"Stop that process, or move the cluster's ports with `export EOSLAB_PORT_OFFSET={offset + 1000}`.",
    )


def check_cpus() -> Check:
    n = os.cpu_count() or 1
    if n >= 2:
        return Check("CPUs", True, f"{n} cores")
    return Check(
        "CPUs", False, f"{n} core", "Give this machine (or VM) 2 cores: with one, six JVMs start in minutes.", False
    )


def check_disk() -> Check:
    from eoslab._paths import data_dir

    folder = data_dir()
    probe = next((p for p in (folder, *folder.parents) if p.exists()), folder.anchor)
    free = shutil.disk_usage(probe).free / 2**20
    found = f"{free:,.0f} MB free for {folder}"
    if free >= MIN_DISK_MB:
        return Check("disk", True, found)
    return Check("disk", False, found, f"Free at least {MIN_DISK_MB:,} MB on that disk, or set EOSLAB_DATA elsewhere.")


def check_jars() -> Check:
    from eoslab import _jars

    if os.environ.get("KAFKA_HOME"):
        try:
            libs = _jars.kafka_home_libs()
            return Check("Kafka jars", True, f"KAFKA_HOME={os.environ['KAFKA_HOME']} ({libs})")
        except Exception as exc:  # noqa: BLE001 - its message is the sentence to show
            return Check("Kafka jars", False, "KAFKA_HOME is set but unusable", str(exc))
    if source := _jars.jar_source(f"kafka-{KAFKA_VERSION}.classpath"):
        return Check("Kafka jars", True, source)
    if mvn := shutil.which("mvn"):
        return Check("Kafka jars", True, f"not fetched yet; Maven ({mvn}) will fetch them once (~100 MB)")
    return Check(
        "Kafka jars",
        False,
        "not fetched, and no Maven",
        "Install Maven (or run `conda env create -f environment.yml`), or set KAFKA_HOME, or use a workshop bundle.",
    )


def check_docker() -> Check:
    """Only the docker backend needs Docker: missing is a note unless EOSLAB_BACKEND=docker."""
    needed = (os.environ.get("EOSLAB_BACKEND") or "local").lower() == "docker"
    docker = shutil.which("docker")
    if docker is None:
        return Check(
            "Docker",
            not needed,
            "no docker command" + ("" if needed else " (only EOSLAB_BACKEND=docker needs it)"),
            "Install Docker, or unset EOSLAB_BACKEND to use the local backend." if needed else "",
            needed,
        )
    try:
        proc = subprocess.run(
            [docker, "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True, timeout=10
        )
        answers = proc.returncode == 0 and proc.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        answers = ""
    if answers:
        return Check("Docker", True, f"engine {proc.stdout.strip()} answers", "", needed)
    found = "docker command found, but no engine answers" + ("" if needed else " (only EOSLAB_BACKEND=docker needs it)")
    todo = "Start Docker (`sudo systemctl start docker` or Docker Desktop), or unset EOSLAB_BACKEND." if needed else ""
    return Check("Docker", not needed, found, todo, needed)


def check_chromium() -> Check:
    """Only the browser test (tests/browser) needs Chromium."""
    for exe in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(exe):
            return Check("Chromium", True, f"{path} (for the browser test)", required=False)
    return Check(
        "Chromium",
        False,
        "not found (only the browser test in `make test` needs it)",
        "Run `bash tools/system/chromium.sh` as root (Debian/Ubuntu) or install Chromium; lessons do not need it.",
        required=False,
    )


def check_kcat() -> Check:
    """kcat (librdkafka's command-line client) is used by one optional cell of module 04 only."""
    for exe in ("kcat", "kafkacat"):
        if path := shutil.which(exe):
            return Check("kcat", True, f"{path} (module 04's optional kcat cell)", required=False)
    return Check(
        "kcat",
        False,
        "not found (only module 04's optional kcat cell uses it; the lab image has it)",
        "Install it if you want that cell: `apt install kcat` (Debian/Ubuntu) or `brew install kcat` (macOS).",
        required=False,
    )


def platform_row(system: str, release: str, backend: str, in_container: bool = False) -> Check:
    """Which row of README's platform table this machine is (``system``: ``platform.system()``, ``release``:
    ``platform.release()``, ``backend``: ``$EOSLAB_BACKEND``, ``in_container``: the kit runs in the lab
    container): what it needs and whether CI tests it."""
    if in_container:
        return Check(
            "platform",
            True,
            "the lab container (six containers beside it, JupyterLab, a JDK and Spark in it): README's row for any "
            "OS with Docker; CI tests it on Linux",
        )
    cluster = "six containers" if backend == "docker" else "six JVMs on this machine"
    if system == "Linux" and "microsoft" in release.lower():
        return Check("platform", True, f"Windows, inside WSL2 ({cluster}): README's Windows row, run as on Linux")
    if system == "Linux":
        return Check("platform", True, f"Linux ({cluster}): README's Linux row, the one CI tests")
    if system == "Darwin":
        return Check(
            "platform",
            True,
            f"macOS ({cluster}): README's macOS row, not tested by CI; Spark and the Java client run here, "
            "so a JDK 17 is needed with either backend",
        )
    if system == "Windows":
        return Check(
            "platform",
            False,
            "Windows, natively: the pipeline demos and the grader need POSIX signals it does not have",
            "Run the course inside WSL2 (Ubuntu), as README's Windows row says.",
        )
    return Check("platform", True, f"{system} ({cluster}): no row of README's table, not tested", required=False)


def check_platform() -> Check:
    from eoslab.topology import in_compose

    backend = (os.environ.get("EOSLAB_BACKEND") or "local").lower()
    return platform_row(platform.system(), platform.release(), backend, in_compose())


CHECKS: tuple[Callable[[], Check], ...] = (
    check_platform,
    check_python,
    check_java,
    check_memory,
    check_ports,
    check_cpus,
    check_disk,
    check_jars,
    check_docker,
    check_chromium,
    check_kcat,
)


def doctor() -> Report:
    """Run every check (a few seconds: one `java -version`, one `docker info`)."""
    return Report(check() for check in CHECKS)
