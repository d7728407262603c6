"""The docker backend: the same six nodes as containers of ``apache/kafka``.

Learners drive it through ``docker compose`` (``EOSLAB_BACKEND=docker``);
tests hand it a testcontainers ``DockerCompose`` (:meth:`DockerBackend.from_testcontainers`).
Kafka's CLI tools run inside a node's container (``docker compose exec``), so
this path needs no Kafka jars and no Maven on the host. Java is still needed on
the host for one thing: PySpark (module 06) runs a JVM of its own.

Node faults map to Docker's own: ``kill`` = ``docker compose kill -s SIGKILL``,
``stop`` = SIGTERM with a grace period, ``pause`` = the cgroup freezer (as
SIGSTOP for a process: alive, silent).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from eoslab._compose import COMPOSE_PROJECT, CONTAINER_DATA_DIR, render_compose
from eoslab._java import first_error_line
from eoslab._paths import data_dir, project_root
from eoslab._timeouts import NODE_STOP, TOOL
from eoslab.cluster._backend import TOOLS, NodeStatus
from eoslab.errors import EoslabError, SetupError
from eoslab.topology import TOPOLOGY, Node, Topology

DOCKER_CLI_TIMEOUT = 20.0
"""`docker info` / `docker compose version` answer in well under a second from a live engine."""
COMPOSE_TIMEOUT = 300.0
"""A compose command may start six JVM containers (`up --wait`, itself bounded by UP_WAIT) or stop them."""
UP_WAIT = 120
"""`docker compose up --wait`: the healthchecks pass once Kafka listens, ~READY's cold start, in containers."""
EXEC_TIMEOUT = 60.0
"""`docker compose exec ... find`: a directory listing in a running container."""


def docker_available() -> str | None:
    """None when a Docker engine answers, else the reason it does not (one sentence)."""
    docker = shutil.which("docker")
    if docker is None:
        return "the `docker` command is not installed"
    try:
        proc = subprocess.run(
            [docker, "info", "--format", "{{.ServerVersion}}"],
            capture_output=True,
            text=True,
            timeout=DOCKER_CLI_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`docker info` failed ({exc})"
    if proc.returncode != 0 or not proc.stdout.strip():
        return "no Docker engine answers (`docker info` fails): the docker client is here, the daemon is not"
    compose = subprocess.run([docker, "compose", "version"], capture_output=True, text=True, timeout=DOCKER_CLI_TIMEOUT)
    if compose.returncode != 0:
        return "the `docker compose` plugin is missing"
    return None


def compose_file() -> Path:
    """The committed docker-compose.yml in a checkout; a freshly rendered one otherwise."""
    root = project_root()
    if root is not None and (root / "docker-compose.yml").is_file():
        return root / "docker-compose.yml"
    path = data_dir() / "docker-compose.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_compose())
    return path


class DockerBackend:
    name = "docker"

    def __init__(
        self,
        topology: Topology = TOPOLOGY,
        compose_cmd: list[str] | None = None,
        *,
        on_up: Callable[[], None] | None = None,
        on_down: Callable[[], None] | None = None,
    ) -> None:
        self.topology = topology
        self._cmd = compose_cmd
        self._on_up = on_up
        self._on_down = on_down

    @classmethod
    def from_testcontainers(cls, compose: Any, topology: Topology = TOPOLOGY) -> DockerBackend:
        """Drive a testcontainers ``DockerCompose`` (tests): its start/stop, its compose command."""
        return cls(
            topology, compose.docker_compose_command(), on_up=compose.start, on_down=lambda: compose.stop(down=True)
        )

    # -- plumbing ---------------------------------------------------------------
    def _base(self) -> list[str]:
        if self._cmd is None:
            if (why := docker_available()) is not None:
                raise SetupError(
                    f"The docker backend needs Docker, but {why}: start Docker Desktop/the docker "
                    "service, or use the local backend (unset EOSLAB_BACKEND)."
                )
            self._cmd = ["docker", "compose", "-p", COMPOSE_PROJECT, "-f", str(compose_file())]
        return list(self._cmd)

    def _compose(
        self, *args: str, timeout: float = COMPOSE_TIMEOUT, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([*self._base(), *args], capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
            raise EoslabError(f"`docker compose {' '.join(args)}` failed: {last}")
        return proc

    # -- lifecycle ----------------------------------------------------------------
    def up(self) -> None:
        if self._on_up is not None:
            self._on_up()
        else:
            self._compose("up", "--detach", "--no-recreate", "--wait", "--wait-timeout", str(UP_WAIT))

    def down(self, timeout: float = NODE_STOP) -> None:
        if self._on_down is not None:
            self._on_down()
        else:
            self._compose("down", "--timeout", str(int(timeout)))

    def reset(self) -> None:
        self._compose("down", "--volumes", "--timeout", str(int(NODE_STOP)))

    def _containers(self) -> dict[str, dict[str, Any]]:
        proc = self._compose("ps", "--all", "--format", "json", check=False)
        rows: list[dict[str, Any]] = []
        text = proc.stdout.strip()
        if text.startswith("["):
            rows = json.loads(text)
        else:  # one JSON object per line (compose v2.21+)
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        return {r.get("Service", ""): r for r in rows}

    def status(self) -> list[NodeStatus]:
        rows = self._containers()
        out = []
        for node in self.topology.nodes:
            row = rows.get(node.name, {})
            state = row.get("State", "")
            mapped = "running" if state == "running" else "paused" if state == "paused" else "stopped"
            out.append(NodeStatus(node.name, node.role, node.node_id, mapped, None, node.ports))  # type: ignore[arg-type]
        return out

    def kill(self, node: Node) -> None:
        self._compose("kill", "--signal", "SIGKILL", node.name)

    def stop(self, node: Node, timeout: float = NODE_STOP) -> None:
        self._compose("stop", "--timeout", str(int(timeout)), node.name)

    def start(self, node: Node) -> None:
        self._compose("start", node.name)

    def pause(self, node: Node) -> None:
        self._compose("pause", node.name)

    def resume(self, node: Node) -> None:
        self._compose("unpause", node.name, check=False)

    def logs(self, node: Node, lines: int = 50) -> str:
        return self._compose("logs", "--no-color", "--tail", str(lines), node.name, check=False).stdout

    def died_during_start(self, node: Node) -> str | None:
        """Why a node's container is not running, from its last log lines (None if it runs)."""
        if any(s.name == node.name and s.state != "stopped" for s in self.status()):
            return None
        return first_error_line(self.logs(node, 200)) or f"its container exited; see `docker compose logs {node.name}`"

    def data_path(self, node: Node) -> str:
        return CONTAINER_DATA_DIR

    def host_data_path(self, node: Node) -> Path | None:
        return None  # in a named volume: `docker compose exec broker-1 ls /var/lib/kafka/data`

    def list_files(self, node: Node, folder: str) -> list[tuple[str, int]]:
        proc = subprocess.run(
            [
                *self._base(),
                "exec",
                "-T",
                node.name,
                "find",
                f"{CONTAINER_DATA_DIR}/{folder}",
                "-maxdepth",
                "1",
                "-type",
                "f",
                "-printf",
                "%f %s\\n",
            ],
            capture_output=True,
            text=True,
            timeout=EXEC_TIMEOUT,
        )
        if proc.returncode != 0:
            raise EoslabError(
                f"{node.name} has no folder {folder} in {CONTAINER_DATA_DIR}: "
                "check the topic and partition, and that this broker holds a replica."
            )
        rows = [line.rsplit(" ", 1) for line in proc.stdout.splitlines() if line.strip()]
        return sorted((name, int(size)) for name, size in rows)

    def tool_bootstrap_servers(self) -> str:
        # Inside the compose network the INTERNAL listeners are reachable by name.
        return ",".join(f"{b.name}:{b.internal_port}" for b in self.topology.brokers)

    def run_tool(
        self, tool: str, args: list[str], *, node: Node | None = None, timeout: float = TOOL
    ) -> subprocess.CompletedProcess[str]:
        target = node or self.topology.brokers[0]
        script = f"/opt/kafka/bin/{TOOLS[tool].script}"
        return subprocess.run(
            [*self._base(), "exec", "-T", target.name, script, *args], capture_output=True, text=True, timeout=timeout
        )
