"""The docker backend: the same six nodes as containers of a Kafka image.

Learners drive it through ``docker compose`` (``EOSLAB_BACKEND=docker``);
tests hand it a testcontainers ``DockerCompose`` (:meth:`DockerBackend.from_testcontainers`).
The image is the official ``apache/kafka`` unless ``$EOSLAB_KAFKA_IMAGE`` names another
(:func:`eoslab._image.kafka_image`). Kafka's CLI tools run inside a node's container
(``docker compose exec``), so this path needs no Kafka jars and no Maven on the host. Java is
still needed on the host for one thing: PySpark (module 06) runs a JVM of its own.

Node faults map to Docker's own: ``kill`` = ``docker compose kill -s SIGKILL``,
``stop`` = SIGTERM with a grace period, ``pause`` = the cgroup freezer (as
SIGSTOP for a process: alive, silent).

At offset 0 in a checkout the backend runs the committed ``docker-compose.yml``; at another
``$EOSLAB_PORT_OFFSET`` it renders its own file (its own ports, project and container names), so a
docker cluster can run beside another cluster.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psutil

from eoslab._compose import (
    CONTAINER_DATA_DIR,
    CONTAINER_TOOL_ENV,
    IMAGE_VARIABLE,
    compose_project,
    env_name,
    render_compose,
)
from eoslab._image import kafka_image
from eoslab._paths import data_dir, project_root
from eoslab._timeouts import NODE_STOP, TOOL
from eoslab.cluster import _overrides
from eoslab.cluster._backend import TOOLS, NodeStatus
from eoslab.cluster._docker_checks import check_image, check_ports, docker_available, exited_reason
from eoslab.cluster._startup import PhaseHook
from eoslab.errors import ClusterError, ClusterStartError, EoslabError, PartitionFolderMissing, SetupError
from eoslab.topology import TOPOLOGY, Node, Topology

__all__ = ["DockerBackend", "compose_file", "docker_available"]

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

LOG_TAIL = 15
"""Lines of a container's log quoted in an error about it."""

COMPOSE_TIMEOUT = 300.0
"""A compose command may start six JVM containers (`up --wait`, itself bounded by UP_WAIT) or stop them."""
UP_WAIT = 120
"""`docker compose up --wait`: the healthchecks pass once Kafka listens, ~READY's cold start, in containers."""
PAUSE_ATTEMPTS = 3
"""`docker pause` (a cgroup freeze) tried this often before its error is raised."""
EXEC_TIMEOUT = 60.0
"""`docker compose exec ...`: a directory listing in a running container."""


def compose_file(topology: Topology = TOPOLOGY) -> Path:
    """The committed docker-compose.yml (offset 0, in a checkout); else a rendering in the data folder."""
    root = project_root()
    if topology.port_offset == 0 and root is not None and (root / "docker-compose.yml").is_file():
        return root / "docker-compose.yml"
    name = "docker-compose.yml" if topology.port_offset == 0 else f"docker-compose.{compose_project(topology)}.yml"
    path = data_dir() / name
    text = render_compose(topology)
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


class DockerBackend:
    name = "docker"
    ready_timeout = 180.0
    """Twice the local backend's 90 s: every container runs a second JVM before its node (the image's
    start-up step formats the storage on every start), containers are created, and on macOS/Windows
    it all runs in Docker Desktop's VM. Measured on a 2-core machine under load 20-40 (docs/docker.md):
    59-97 s from empty volumes, more than 90 s once beside a running local cluster."""

    def __init__(
        self,
        topology: Topology = TOPOLOGY,
        compose_cmd: list[str] | None = None,
        *,
        on_up: Callable[[], None] | None = None,
        on_down: Callable[[], None] | None = None,
        image: str | None = None,
        cwd: str | None = None,
    ) -> None:
        self.topology = topology
        self._cwd = cwd  # where relative paths in compose_cmd are relative to
        self._cmd = compose_cmd
        self._on_up = on_up
        self._on_down = on_down
        self._image = image

    @classmethod
    def from_testcontainers(
        cls, compose: Any, topology: Topology = TOPOLOGY, image: str | None = None
    ) -> DockerBackend:
        """Drive a testcontainers ``DockerCompose`` (tests): its start/stop, its compose command.

        testcontainers runs ``docker compose`` with this process's environment: give the
        ``DockerCompose`` an ``env_file`` that sets ``EOSLAB_KAFKA_IMAGE`` to ``image``.
        """
        return cls(
            topology,
            compose.docker_compose_command(),
            on_up=compose.start,
            on_down=lambda: compose.stop(down=True),
            image=image,
            cwd=str(compose.context),
        )

    @property
    def image(self) -> str:
        """The Kafka image these containers run (resolved once)."""
        if self._image is None:
            self._image = kafka_image()
        return self._image

    # -- plumbing ---------------------------------------------------------------
    def _base(self) -> list[str]:
        if self._cmd is None:
            if (why := docker_available()) is not None:
                raise SetupError(
                    f"The docker backend needs Docker, but {why}: start Docker Desktop/the docker "
                    "service, or use the local backend (unset EOSLAB_BACKEND)."
                )
            project = compose_project(self.topology)
            self._cmd = ["docker", "compose", "-p", project, "-f", str(compose_file(self.topology))]
        return list(self._cmd)

    def _env(self) -> dict[str, str]:
        return dict(os.environ, **{IMAGE_VARIABLE: self.image})

    def _run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=self._env(), cwd=self._cwd)

    def _compose(
        self, *args: str, timeout: float = COMPOSE_TIMEOUT, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = self._run([*self._base(), *args], timeout)
        if check and proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise ClusterError(f"`docker compose {' '.join(args)}` failed: {last}")
        return proc

    # -- lifecycle ----------------------------------------------------------------
    def up(self, on_phase: PhaseHook | None = None) -> None:
        rows = self._containers()
        todo = [n for n in self.topology.nodes if rows.get(n.name, {}).get("State") not in ("running", "paused")]
        if not todo:
            return
        check_image(self.image)
        check_ports(todo, rows)
        try:
            if self._on_up is not None:
                self._on_up()
            else:
                self._compose("up", "--detach", "--no-recreate", "--wait", "--wait-timeout", str(UP_WAIT))
        except (subprocess.CalledProcessError, EoslabError) as exc:
            self._raise_exited(exc)
            raise
        if on_phase is not None:
            on_phase("spawned")  # compose formats and starts each container itself

    def _raise_exited(self, exc: BaseException) -> None:
        """A container that exited during `up`: name it, say what to do, quote its log tail."""
        dead = [(n, why) for n in self.topology.nodes if (why := self.died_during_start(n))]
        if dead:
            tails = "\n".join(
                f"--- last lines of {n.name}'s log ---\n{self.logs(n, LOG_TAIL).rstrip()}" for n, _ in dead
            )
            raise ClusterStartError(
                "; ".join(f"{n.name} {why}" for n, why in dead)
                + ": fix what its log says (below), then `eoslab reset` and `eoslab up` again.\n"
                + tails
            ) from None
        err = getattr(exc, "stderr", None)
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
        if err:
            last = (err.strip().splitlines() or ["(no output)"])[-1]
            raise ClusterStartError(
                f"`docker compose up` failed ({last}): see `docker compose logs`, then retry."
            ) from None

    def down(self, timeout: float = NODE_STOP) -> None:
        if self._on_down is not None:
            self._on_down()
        else:
            self._compose("down", "--timeout", str(int(timeout)))
        self._forget_overrides()  # the containers are gone: the next `up` creates them as the compose file says

    def reset(self) -> None:
        self._compose("down", "--volumes", "--timeout", str(int(NODE_STOP)))
        self._forget_overrides()

    def _overrides_file(self, node: Node) -> Path:
        """A compose file (JSON is YAML) that adds the node's settings to its service's environment."""
        return data_dir() / "overrides" / f"{compose_project(self.topology)}-{node.name}.json"

    def overrides(self, node: Node) -> dict[str, str]:
        return _overrides.read(self._overrides_file(node).with_suffix(".properties.json"))

    def _forget_overrides(self) -> None:
        for node in self.topology.nodes:
            self._overrides_file(node).unlink(missing_ok=True)
            self._overrides_file(node).with_suffix(".properties.json").unlink(missing_ok=True)

    def _containers(self) -> dict[str, dict[str, Any]]:
        """This cluster's containers by node name: ``State`` (running, paused, exited, ...), ``ID`` and the engine's
        ``Engine`` state (Pid, ExitCode, Status). ONE `docker inspect` of the names the compose file gives them
        (``<project>-<node>``; it prints the ones that exist and exits 1 if some do not). Not `docker compose ps`
        and then `docker inspect`: a heal asks five times, and the two CLIs cost ~100 ms of CPU a time, which
        the course tier's ~400 heals would pay on a saturated machine (docs/reliability.md)."""
        project = compose_project(self.topology)
        names = {f"{project}-{n.name}": n.name for n in self.topology.nodes}
        self._base()  # Docker is there, else one sentence saying what to do
        proc = self._run(["docker", "inspect", *names], 60)
        try:
            found = json.loads(proc.stdout or "[]")
        except ValueError:
            found = []
        rows: dict[str, dict[str, Any]] = {}
        for c in found:
            if (node := names.get(str(c.get("Name", "")).lstrip("/"))) is not None:
                state = c.get("State") or {}
                rows[node] = {"State": state.get("Status", ""), "ID": str(c.get("Id", ""))[:12], "Engine": state}
        return rows

    @staticmethod
    def _java_rss(pid: int) -> float | None:
        """RSS of the container's main process, if it is a java on THIS kernel (not in Docker Desktop's VM)."""
        try:
            proc = psutil.Process(pid)
            if proc.name() != "java":
                return None
            return float(proc.memory_info().rss) / 2**20
        except (psutil.Error, ValueError):
            return None

    def status(self) -> list[NodeStatus]:
        rows = self._containers()
        out = []
        for node in self.topology.nodes:
            row = rows.get(node.name, {})
            state = row.get("State", "")
            mapped = "running" if state == "running" else "paused" if state == "paused" else "stopped"
            pid = row.get("Engine", {}).get("Pid") or None
            rss = self._java_rss(pid) if pid else None
            out.append(NodeStatus(node.name, node.role, node.node_id, mapped, pid, node.ports, rss))  # type: ignore[arg-type]
        return out

    def died_during_start(self, node: Node) -> str | None:
        """'exited with code 1 (<its log's error line>)' for a node whose container is not running, else None."""
        row = self._containers().get(node.name)
        if row is None or row.get("State") in ("running", "paused"):
            return None
        return exited_reason(row.get("Engine", {}), self.logs(node, LOG_TAIL))

    def kill(self, node: Node) -> None:
        self._compose("kill", "--signal", "SIGKILL", node.name)

    def stop(self, node: Node, timeout: float = NODE_STOP) -> None:
        self._compose("stop", "--timeout", str(int(timeout)), node.name)

    def start(self, node: Node, properties: Mapping[str, str] | None = None) -> None:
        """Start the node's container; with ``properties`` (``{}``: none), create it anew with those settings on top
        of the compose file's (its data volume kept): ``docker compose up --no-deps --force-recreate``."""
        if properties is None:
            self._compose("start", node.name)
            return
        extra = self._overrides_file(node)
        _overrides.write(extra.with_suffix(".properties.json"), properties)
        files: list[str] = []
        if properties:
            env = {env_name(k): str(v) for k, v in properties.items()}
            extra.write_text(json.dumps({"services": {node.name: {"environment": env}}}, indent=1) + "\n")
            files = ["-f", str(extra)]
        else:
            extra.unlink(missing_ok=True)
        wait = ["--wait", "--wait-timeout", str(UP_WAIT)] if node.is_broker else []
        proc = self._run(
            [*self._base(), *files, "up", "--detach", "--no-deps", "--force-recreate", *wait, node.name],
            COMPOSE_TIMEOUT,
        )
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise ClusterError(f"`docker compose up {node.name}` with other settings failed: {last}")

    def pause(self, node: Node) -> None:
        # runc freezes the container's cgroup and gives up ("unable to freeze") when a process does not
        # reach the frozen state in time, which a busy 2-core machine sees now and then: try again.
        for attempt in range(PAUSE_ATTEMPTS):
            proc = self._compose("pause", node.name, check=attempt == PAUSE_ATTEMPTS - 1)
            if proc.returncode == 0:
                return
            time.sleep(1.0)

    def resume(self, node: Node) -> None:
        self._compose("unpause", node.name, check=False)

    def logs(self, node: Node, lines: int = 50) -> str:
        proc = self._compose("logs", "--no-color", "--no-log-prefix", "--tail", str(lines), node.name, check=False)
        return ANSI.sub("", proc.stdout)  # compose 2.26 starts each line with ESC[2K even with --no-color

    def data_path(self, node: Node) -> str:
        return CONTAINER_DATA_DIR

    def host_data_path(self, node: Node) -> Path | None:
        return None  # in a named volume: `docker compose exec broker-1 ls /var/lib/kafka/data`

    def list_files(self, node: Node, folder: str) -> list[tuple[str, int]]:
        # POSIX sh + stat: the same in the official image (busybox, Alpine) and in the local one (Debian).
        script = 'cd "$1" || exit 3; for f in *; do [ -f "$f" ] && stat -c "%s %n" "$f"; done; exit 0'
        proc = self._run(
            [*self._base(), "exec", "-T", node.name, "sh", "-c", script, "sh", f"{CONTAINER_DATA_DIR}/{folder}"], 60
        )
        if proc.returncode != 0:
            raise PartitionFolderMissing(
                f"{node.name} has no folder {folder} in {CONTAINER_DATA_DIR}: "
                "check the topic and partition, and that this broker holds a replica."
            )
        rows = [line.split(" ", 1) for line in proc.stdout.splitlines() if line.strip()]
        return sorted((name, int(size)) for size, name in rows)

    def tool_bootstrap_servers(self) -> str:
        # Inside the compose network the INTERNAL listeners are reachable by name.
        return ",".join(f"{b.name}:{b.internal_port}" for b in self.topology.brokers)

    def _running_broker(self) -> Node:
        """A broker whose container runs (a lesson may have killed broker-1): tools run inside it."""
        rows = self._containers()
        for b in self.topology.brokers:
            if rows.get(b.name, {}).get("State") == "running":
                return b
        return self.topology.brokers[0]

    def run_tool(
        self, tool: str, args: list[str], *, node: Node | None = None, timeout: float = TOOL
    ) -> subprocess.CompletedProcess[str]:
        target = node or self._running_broker()
        script = f"/opt/kafka/bin/{TOOLS[tool].script}"
        env = [arg for name, value in CONTAINER_TOOL_ENV for arg in ("-e", f"{name}={value}")]
        return self._run([*self._base(), "exec", "-T", *env, target.name, script, *args], timeout)
