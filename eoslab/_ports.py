"""The loopback address, and ports: is one free? who holds it, and what would free it (so the sentence can say)?"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterable

import psutil

from eoslab.errors import PortInUseError

LOOPBACK = "127.0.0.1"
"""Every listener of the kit (nodes, fault proxy, its control API) binds here: nothing leaves the machine."""
MOVE = "or move this one's ports with `export EOSLAB_PORT_OFFSET=1000`"


def is_free(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = LOOPBACK) -> int:
    """A port the OS says is free now (for a throw-away process; it may be taken again later)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _listener(port: int) -> psutil.Process | None:
    """The process listening on ``port``, if the OS tells us (another user's needs root)."""
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
                return psutil.Process(conn.pid)
    except (psutil.Error, OSError):
        pass
    return None


def _container(port: int) -> str | None:
    """The running container that publishes ``port`` on the host (Docker's proxy holds the port for it)."""
    try:
        proc = subprocess.run(
            ["docker", "ps", "--filter", f"publish={port}", "--format", "{{.Names}}"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    names = proc.stdout.split()
    return names[0] if proc.returncode == 0 and names else None


def _kind(proc: psutil.Process) -> tuple[str, str]:
    """(who, what to do) for a process: one of the course's own (a cluster, its proxy, JupyterLab), or another."""
    try:
        cmd = " ".join(proc.cmdline())
        name = proc.name()
    except psutil.Error:
        return f"pid {proc.pid}", f"stop that process, {MOVE}"
    if "kafka.Kafka" in cmd or "eoslab.faults" in cmd:
        return (
            f"another eoslab cluster (pid {proc.pid}, started from {proc_cwd(proc)})",
            f"stop it with `eoslab down` there (`make down`), {MOVE}",
        )
    if "jupyter" in cmd:
        return f"a JupyterLab (pid {proc.pid})", "stop it (Ctrl+C where it runs, twice), or give this one `--port=8890`"
    return f"pid {proc.pid} ({name})", f"stop that process, {MOVE}"


def proc_cwd(proc: psutil.Process) -> str:
    try:
        return str(proc.cwd())
    except psutil.Error:
        return "another folder"


def holder(port: int) -> tuple[str, str]:
    """Who holds ``port`` and what frees it, e.g. ('the container eoslab-broker-1', 'stop it with ...')."""
    proc = _listener(port)
    if proc is None or _name(proc) == "docker-proxy":
        container = _container(port)
        if container is not None:
            down = "`docker compose --profile lab down` in its folder" if container.startswith("eoslab") else ""
            return f"the Docker container {container}", f"stop it with {down or f'`docker stop {container}`'}, {MOVE}"
    if proc is None:
        return "another process", f"stop it, {MOVE}"
    return _kind(proc)


def _name(proc: psutil.Process) -> str:
    try:
        return str(proc.name())
    except psutil.Error:
        return ""


def taken(port: int, owner: str) -> str:
    """The sentence for a port that ``owner`` needs and another holds."""
    who, todo = holder(port)
    return f"Port {port} (needed by {owner}) is held by {who}: {todo}."


def check_free(ports: Iterable[int], *, owner: str) -> None:
    """Raises PortInUseError, one sentence naming the holder and what frees the port, for the first one taken."""
    for port in ports:
        if not is_free(port):
            raise PortInUseError(taken(port, owner))
