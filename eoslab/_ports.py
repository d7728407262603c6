"""The loopback address, and ports: is one free? who holds it (so the sentence can name them)?"""

from __future__ import annotations

import socket
from collections.abc import Iterable

import psutil

from eoslab.errors import PortInUseError

LOOPBACK = "127.0.0.1"
"""Every listener of the kit (nodes, fault proxy, its control API) binds here: nothing leaves the machine."""


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


def holder(port: int) -> str:
    """'pid 123 (java)' for the process listening on ``port``, if the OS tells us."""
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
                try:
                    return f"pid {conn.pid} ({psutil.Process(conn.pid).name()})"
                except psutil.Error:
                    return f"pid {conn.pid}"
    except (psutil.Error, OSError):
        pass
    return "another process"


def check_free(ports: Iterable[int], *, owner: str) -> None:
    for port in ports:
        if not is_free(port):
            raise PortInUseError(
                f"Port {port} (needed by {owner}) is already in use by {holder(port)}: "
                "stop that process, or run `eoslab down` if it is an old eoslab cluster."
            )
