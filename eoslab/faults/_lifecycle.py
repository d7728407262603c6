"""Start and stop the proxy daemon: ``ensure_proxy`` (idempotent) and ``stop_proxy``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab._paths import data_dir
from eoslab._wait import wait_until
from eoslab.faults._errors import ProxyStartError
from eoslab.topology import TOPOLOGY, Topology

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

START_TIMEOUT = 20.0  # the daemon imports pandas-free code and loads the schemas: ~1 s, 20 on a busy laptop
STOP_TIMEOUT = 5.0  # SIGTERM closes sockets at once; after 5 s it is stuck, SIGKILL


def proxy_dir() -> Path:
    path = data_dir() / "proxy"
    path.mkdir(parents=True, exist_ok=True)
    return path


def pid_file(topology: Topology = TOPOLOGY) -> Path:
    """One per control port: two clusters of one checkout (local + docker, other offsets) keep apart."""
    return proxy_dir() / f"proxy-{topology.proxy_control_port}.pid"


def log_file(topology: Topology = TOPOLOGY) -> Path:
    return proxy_dir() / f"proxy-{topology.proxy_control_port}.log"


def health(topology: Topology = TOPOLOGY, timeout: float = 1.0) -> dict[str, Any] | None:
    """The daemon's /health answer, or None when nothing answers on the control port."""
    url = f"http://127.0.0.1:{topology.proxy_control_port}/health"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - loopback only
            data: dict[str, Any] = json.loads(resp.read())
            return data
    except (OSError, ValueError, urllib.error.URLError):
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _log_tail(topology: Topology = TOPOLOGY, lines: int = 8) -> str:
    try:
        text = log_file(topology).read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return "(no log)"
    return "--- last lines of the proxy log ---\n" + "\n".join(text)


def ensure_proxy(cluster: Cluster | None = None, timeout: float = START_TIMEOUT) -> int:
    """Start the proxy daemon unless it runs; wait until its control API answers; return its pid."""
    topology = cluster.topology if cluster is not None else TOPOLOGY
    found = health(topology)
    if found is not None:
        return int(found["pid"])
    env = dict(os.environ, EOSLAB_PORT_OFFSET=str(topology.port_offset), EOSLAB_DATA=str(data_dir()))
    with open(log_file(topology), "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "eoslab.faults.daemon"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    pid_file(topology).write_text(f"{proc.pid}\n")

    def up() -> dict[str, Any] | None:
        if proc.poll() is not None:
            raise ProxyStartError(
                f"The fault proxy exited with code {proc.returncode} during start-up: see {log_file(topology)}.\n"
                + _log_tail(topology)
            )
        return health(topology)

    try:
        wait_until(
            up,
            timeout=timeout,
            interval=0.1,
            what=f"the fault proxy's control API on 127.0.0.1:{topology.proxy_control_port}",
            describe=lambda: _log_tail(topology),
            hint="A port of the proxy may be taken: `eoslab status` lists the ports; see the proxy log.",
        )
    except Exception as exc:
        if proc.poll() is None:
            proc.kill()
        pid_file(topology).unlink(missing_ok=True)
        if isinstance(exc, ProxyStartError):
            raise
        raise ProxyStartError(str(exc)) from None
    return proc.pid


def stop_proxy(topology: Topology = TOPOLOGY, timeout: float = STOP_TIMEOUT) -> bool:
    """SIGTERM the daemon, SIGKILL it after ``timeout``; True if one was running."""
    pid: int | None = None
    try:
        pid = int(pid_file(topology).read_text().strip())
    except (OSError, ValueError):
        found = health(topology)
        pid = int(found["pid"]) if found else None
    if pid is None or not _pid_alive(pid):
        pid_file(topology).unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while _pid_alive(pid) and time.monotonic() < deadline:
        try:  # our own child (started in this process): reap it, or it stays a zombie that looks alive
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                break
        except ChildProcessError:
            pass
        time.sleep(0.05)
    if _pid_alive(pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    pid_file(topology).unlink(missing_ok=True)
    return True
