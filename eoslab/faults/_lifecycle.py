"""Start and stop the proxy daemon: ``ensure_proxy`` (idempotent) and ``stop_proxy``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from eoslab import _ports, _procs
from eoslab._paths import data_dir
from eoslab._ports import LOOPBACK
from eoslab._wait import wait_until
from eoslab.faults._control_client import HasTopology, health, topology_of
from eoslab.faults._errors import ProxyStartError
from eoslab.topology import TOPOLOGY, Topology, in_compose

START_TIMEOUT = 20.0  # the daemon imports pandas-free code and loads the schemas: ~1 s, 20 on a busy laptop
STOP_TIMEOUT = 5.0  # SIGTERM closes sockets at once; after 5 s it is stuck, SIGKILL
DAEMON_MODULE = "eoslab.faults.daemon"
"""What the daemon's command line holds (``python -m eoslab.faults.daemon``): a reused pid is not signalled."""


def proxy_dir() -> Path:
    path = data_dir() / "proxy"
    path.mkdir(parents=True, exist_ok=True)
    return path


def pid_file(topology: Topology = TOPOLOGY) -> Path:
    """One per control port: two clusters of one checkout (local + docker, other offsets) keep apart."""
    return proxy_dir() / f"proxy-{topology.proxy_control_port}.pid"


def log_file(topology: Topology = TOPOLOGY) -> Path:
    return proxy_dir() / f"proxy-{topology.proxy_control_port}.log"


def _log_tail(topology: Topology = TOPOLOGY, lines: int = 8) -> str:
    try:
        text = log_file(topology).read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return "(no log)"
    return "--- last lines of the proxy log ---\n" + "\n".join(text)


class ProxyStart:
    """A proxy daemon on its way up (or found running): :meth:`wait` returns its pid once its control
    API answers. Split from :func:`ensure_proxy` so that ``eoslab up`` starts the proxy while the JVMs
    start, instead of after them."""

    def __init__(self, topology: Topology, proc: subprocess.Popen[bytes] | None, pid: int) -> None:
        self.topology = topology
        self.proc = proc  # None: it was running already
        self.pid = pid

    def _up(self) -> dict[str, Any] | None:
        if self.proc is not None and self.proc.poll() is not None:
            raise ProxyStartError(
                f"The fault proxy exited with code {self.proc.returncode} during start-up: "
                f"see {log_file(self.topology)}.\n" + _log_tail(self.topology)
            )
        return health(self.topology)

    def wait(self, timeout: float = START_TIMEOUT) -> int:
        if self.proc is None:
            return self.pid
        try:
            wait_until(
                self._up,
                timeout=timeout,
                interval=0.1,
                what=f"the fault proxy's control API on {LOOPBACK}:{self.topology.proxy_control_port}",
                describe=lambda: _log_tail(self.topology),
                hint="A port of the proxy may be taken: `eoslab status` lists the ports; see the proxy log.",
            )
        except Exception as exc:
            self.abandon()
            if isinstance(exc, ProxyStartError):
                raise
            raise ProxyStartError(str(exc)) from None
        return self.pid

    def abandon(self) -> None:
        """Kill the daemon if this start spawned it (a start that failed leaves nothing behind)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        pid_file(self.topology).unlink(missing_ok=True)


def in_lab_container(topology: Topology = TOPOLOGY) -> bool:
    """True on the host when the proxy answering on the control port is the lab container's (published there).

    Then the host starts no proxy of its own (the container holds the ports; both would fight for them) and
    stops none: ``docker compose --profile lab stop lab`` ends that one."""
    found = health(topology)
    return bool(found and found.get("in_compose")) and not in_compose()


def start_proxy(target: Topology | HasTopology | None = None) -> ProxyStart:
    """Spawn the proxy daemon of ``target``'s topology unless it runs; do not wait for it."""
    topology = topology_of(target)
    found = health(topology)
    if found is not None:
        return ProxyStart(topology, None, int(found["pid"]))
    proxy_ports = [*(b.proxy_front_port for b in topology.brokers), topology.proxy_control_port]
    _ports.check_free(proxy_ports, owner="the fault proxy")  # one sentence, instead of a daemon that exits at once
    env = dict(os.environ, EOSLAB_PORT_OFFSET=str(topology.port_offset), EOSLAB_DATA=str(data_dir()))
    with open(log_file(topology), "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", DAEMON_MODULE],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    _procs.write_pid(pid_file(topology), proc.pid)
    return ProxyStart(topology, proc, proc.pid)


def ensure_proxy(target: Topology | HasTopology | None = None, timeout: float = START_TIMEOUT) -> int:
    """Start the proxy daemon of ``target``'s topology (a cluster's, or a topology) unless it runs; wait
    until its control API answers; return its pid."""
    return start_proxy(target).wait(timeout)


def stop_proxy(topology: Topology = TOPOLOGY, timeout: float = STOP_TIMEOUT) -> bool:
    """SIGTERM the daemon, SIGKILL it after ``timeout``; True if one was running."""
    proc = _procs.from_pid_file(pid_file(topology), expect=DAEMON_MODULE)
    if proc is None and in_lab_container(topology):
        return False  # its pid is of the container's namespace; the lab service owns it
    if proc is None and (found := health(topology)) is not None:  # a daemon whose pid file went missing
        proc = _procs.process(int(found["pid"]), expect=DAEMON_MODULE)
    if proc is not None:
        _procs.terminate([proc], timeout)
    pid_file(topology).unlink(missing_ok=True)
    return proc is not None
