"""What the docker backend checks before and after ``up``, each failure one sentence that says what to do.

Docker installed but no engine; the image neither here nor pullable; a port of the topology published
by a container (or taken by a process); a container that exited at start (its log tail quoted).
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from eoslab import _ports
from eoslab._image import LOCAL_IMAGE, image_exists, pull
from eoslab._java import first_error_line
from eoslab.errors import SetupError
from eoslab.topology import KAFKA_IMAGE, Node

DOCKER_CLI_TIMEOUT = 20.0
"""`docker info` / `docker compose version` / `docker ps` answer in well under a second from a live engine."""


def docker_available() -> str | None:
    """None when a Docker engine answers, else the reason it does not (one clause)."""
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
        return "the `docker compose` plugin (compose v2) is missing"
    return None


def check_image(image: str) -> None:
    """The image is here, or pulled now; else one sentence: build the local one, or pull where a registry is."""
    if image_exists(image) or pull(image):
        return
    raise SetupError(
        f"The Kafka image {image} is not on this machine and `docker pull {image}` failed: "
        f"build the local image with `.venv/bin/eoslab image build` (then unset EOSLAB_KAFKA_IMAGE or set it to "
        f"{LOCAL_IMAGE}), or pull {KAFKA_IMAGE} where Docker Hub is reachable."
    )


def check_ports(nodes: list[Node], rows: dict[str, dict[str, Any]]) -> None:
    """Every host port the containers of ``nodes`` publish is free (our own stopped containers hold none)."""
    for node in nodes:
        published = (node.client_port, node.proxied_port) if node.is_broker else (node.controller_port,)
        _ports.check_free(published, owner=node.name)


def exited_reason(state: dict[str, Any], log_tail: str) -> str:
    """'exited with code 1 (KAFKA_ADVERTISED_LISTENERS is not supported ...)': the state and the log's error line."""
    status = state.get("Status") or "not running"
    head = f"exited with code {state.get('ExitCode')}" if status == "exited" else f"is {status}"
    line = first_error_line(log_tail)
    return f"{head} ({line})" if line else head
