"""The local backend: six detached JVMs on 127.0.0.1, from the Apache Kafka jars.

Everything a learner may want to look at is under one folder
(:func:`eoslab._paths.data_dir`, ``kafka-data/`` in a checkout)::

    kafka-data/
      jvm.args, tools.args        the classpath and flags, as java @argfiles
      controller-1/
        server.properties         rendered from eoslab.topology
        controller-1.log          the JVM's stdout+stderr (log4j2, quiet)
        pid
        overrides.json            settings on top of the topology's (Cluster.reconfigure), until a restore
        data/                     log.dirs: meta.properties, __cluster_metadata-0/ ...
      broker-1/ ...               data/ holds demo-0/, __transaction_state-*/ ...

JVMs are started through ``sh -c 'java ... &'`` so that they are re-parented
to init: they outlive the notebook kernel or CLI that started them, and no
zombie is left when one is killed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

from eoslab import _cds, _jars, _java, _ports, _procs
from eoslab._java import first_error_line
from eoslab._paths import PACKAGE_DIR, data_dir
from eoslab._timeouts import NODE_STOP, READY, TOOL
from eoslab._wait import wait_until
from eoslab.cluster import _overrides
from eoslab.cluster._backend import TOOLS, NodeStatus
from eoslab.cluster._startup import PhaseHook, marker_line
from eoslab.errors import ClusterNotRunning, ClusterStartError, DataDirError, PartitionFolderMissing
from eoslab.topology import (
    JVM_HEAP,
    TOOL_JVM_FLAGS,
    TOPOLOGY,
    Node,
    Topology,
    local_broker_extra_flags,
    node_properties,
    render_properties,
    role_jvm_flags,
)

RESOURCES = PACKAGE_DIR / "_resources"

SIGNAL_SEEN = 5.0
"""Signals are delivered asynchronously; the kernel shows a SIGSTOP/SIGCONT in microseconds, 5 s when swapping."""


class LocalBackend:
    """Six JVM processes on loopback; see the module docstring for the folder layout."""

    name = "local"
    ready_timeout = READY

    def __init__(self, topology: Topology = TOPOLOGY, root: Path | None = None) -> None:
        self.topology = topology
        self.root = root or data_dir()

    # -- paths --------------------------------------------------------------
    def node_dir(self, node: Node) -> Path:
        return self.root / node.name

    def host_data_path(self, node: Node) -> Path:
        return self.node_dir(node) / "data"

    def data_path(self, node: Node) -> str:
        return str(self.host_data_path(node))

    def log_file(self, node: Node) -> Path:
        return self.node_dir(node) / f"{node.name}.log"

    def _pid_file(self, node: Node) -> Path:
        return self.node_dir(node) / "pid"

    def _props_file(self, node: Node) -> Path:
        return self.node_dir(node) / "server.properties"

    def _overrides_file(self, node: Node) -> Path:
        return self.node_dir(node) / "overrides.json"

    def overrides(self, node: Node) -> dict[str, str]:
        return _overrides.read(self._overrides_file(node))

    # -- JVM argument files (written once per up; short, readable `ps` lines) --
    def _argfiles(self) -> tuple[Path, Path]:
        jars = _jars.kafka_jars()
        _jars.check_single_log4j_binding(jars)
        self.root.mkdir(parents=True, exist_ok=True)
        cp = os.pathsep.join(jars)
        node_args = self.root / "jvm.args"
        tool_args = self.root / "tools.args"
        cds = _cds.ensure_archive(cp)
        cds_flag = f"-XX:SharedArchiveFile={cds} -Xlog:cds=off -Xlog:cds+dynamic=off\n" if cds else ""
        node_args.write_text(f"{cds_flag}-Dlog4j2.configurationFile={RESOURCES / 'log4j2-node.xml'}\n-cp {cp}\n")
        # The tools map the nodes' archive too (the official image has a storage.jsa for the same reason):
        # most of their classes are Kafka's common ones; a kafka-storage format then costs 0.55 CPU s, not 0.86.
        tool_args.write_text(
            f"{TOOL_JVM_FLAGS}\n{cds_flag}-Dlog4j2.configurationFile={RESOURCES / 'log4j2-tools.xml'}\n-cp {cp}\n"
        )
        return node_args, tool_args

    def _tool_argfile(self) -> Path:
        path = self.root / "tools.args"
        if not path.is_file():
            self._argfiles()
        return path

    # -- process state ------------------------------------------------------
    def _process(self, node: Node) -> psutil.Process | None:
        """The node's live JVM, checked by its command line (pid files can be stale)."""
        return _procs.from_pid_file(self._pid_file(node), expect=str(self._props_file(node)))

    def _state(self, proc: psutil.Process | None) -> str:
        if proc is None:
            return "stopped"
        try:
            return "paused" if proc.status() == psutil.STATUS_STOPPED else "running"
        except psutil.Error:
            return "stopped"

    def status(self) -> list[NodeStatus]:
        rows = []
        for node in self.topology.nodes:
            proc = self._process(node)
            rss = None
            if proc is not None:
                try:
                    rss = proc.memory_info().rss / 2**20
                except psutil.Error:
                    proc = None
            rows.append(
                NodeStatus(
                    node.name,
                    node.role,
                    node.node_id,
                    self._state(proc),  # type: ignore[arg-type]
                    proc.pid if proc else None,
                    node.ports,
                    rss,
                )
            )
        return rows

    def is_alive(self, node: Node) -> bool:
        return self._process(node) is not None

    # -- storage ------------------------------------------------------------
    def _check_data(self, nodes: list[Node]) -> list[Node]:
        """Refuse a folder of another cluster or a half-written one; return the nodes to format."""
        todo = []
        for node in nodes:
            data = self.host_data_path(node)
            meta = data / "meta.properties"
            self.node_dir(node).mkdir(parents=True, exist_ok=True)
            props = node_properties(self.topology, node, data_dir=str(data)) | self.overrides(node)
            self._props_file(node).write_text(render_properties(props))
            if meta.is_file():
                lines = meta.read_text().splitlines()
                props = dict(ln.split("=", 1) for ln in lines if "=" in ln and not ln.startswith("#"))
                if props.get("cluster.id") != self.topology.cluster_id or props.get("node.id") != str(node.node_id):
                    raise DataDirError(
                        f"{data} belongs to another cluster (cluster.id={props.get('cluster.id')}, "
                        f"node.id={props.get('node.id')}): run `eoslab reset` to start a fresh cluster."
                    )
            elif data.exists() and any(data.iterdir()):
                raise DataDirError(
                    f"{data} is half-written (no meta.properties): run `eoslab reset` to start a fresh cluster."
                )
            else:
                todo.append(node)
        return todo

    def _format_all(self, todo: list[Node]) -> None:
        if not todo:
            return
        with ThreadPoolExecutor(max_workers=3) as pool:
            results = list(pool.map(self._format, todo))
        for node, proc in zip(todo, results, strict=True):
            if proc.returncode != 0:
                raise ClusterStartError(
                    f"Formatting {node.name} failed: {first_error_line(proc.stdout + proc.stderr)} "
                    "Run `eoslab reset` and try again."
                )

    def _format(self, node: Node) -> subprocess.CompletedProcess[str]:
        return self.run_tool(
            "storage",
            ["format", "-t", self.topology.cluster_id, "-c", str(self._props_file(node))],
            timeout=TOOL,
        )

    # -- lifecycle ----------------------------------------------------------
    def up(self, on_phase: PhaseHook | None = None) -> None:
        mark = on_phase or (lambda phase: None)
        _java.java_executable()
        nodes = [n for n in self.topology.nodes if not self.is_alive(n)]
        if not nodes:
            return
        todo = self._check_data(nodes)
        for node in nodes:
            _ports.check_free(node.ports, owner=node.name)
        self._argfiles()
        mark("prepared")
        self._format_all(todo)
        mark("formatted")
        for node in nodes:  # controllers come first in topology.nodes
            self._spawn(node)
        mark("spawned")

    def start(self, node: Node, properties: Mapping[str, str] | None = None) -> None:
        proc = self._process(node)
        if proc is not None:
            if self._state(proc) == "paused":
                self.resume(node)
            return
        if properties is not None:
            _overrides.write(self._overrides_file(node), properties)
        _java.java_executable()
        todo = self._check_data([node])
        _ports.check_free(node.ports, owner=node.name)
        if not (self.root / "jvm.args").is_file():
            self._argfiles()
        self._format_all(todo)
        self._spawn(node)

    def _spawn(self, node: Node) -> None:
        java = _java.java_executable()
        argv = [
            java,
            f"@{self.root / 'jvm.args'}",
            *JVM_HEAP[node.role].split(),
            *role_jvm_flags(node.role).split(),
            *local_broker_extra_flags(node.role),
            f"-Deoslab.node={node.name}",
            "kafka.Kafka",
            str(self._props_file(node)),
        ]
        log = self.log_file(node)
        with log.open("a") as fh:
            fh.write(f"\n{marker_line(node.name)}\n")
        pid_file = self._pid_file(node)
        pid_file.unlink(missing_ok=True)
        script = f'exec </dev/null >>{shlex.quote(str(log))} 2>&1; "$@" & echo $! > {shlex.quote(str(pid_file))}'
        # `sh` exits after writing the pid file, so once run() returns the file is there (or the start failed).
        subprocess.run(["sh", "-c", script, "sh", *argv], check=True, start_new_session=True, cwd=self.node_dir(node))
        if not pid_file.is_file():
            raise ClusterStartError(f"{node.name} did not start: see {log}.")

    def stop(self, node: Node, timeout: float = NODE_STOP) -> None:
        self._terminate([node], timeout)

    def _terminate(self, nodes: list[Node], timeout: float) -> None:
        procs = [(n, p) for n in nodes if (p := self._process(n)) is not None]
        _procs.terminate([p for _, p in procs], timeout)
        for node, _ in procs:
            self._pid_file(node).unlink(missing_ok=True)

    def kill(self, node: Node) -> None:
        proc = self._process(node)
        if proc is None:
            return
        _procs.kill([proc])
        self._pid_file(node).unlink(missing_ok=True)

    def pause(self, node: Node) -> None:
        proc = self._require(node)
        proc.send_signal(signal.SIGSTOP)
        # Signals are delivered asynchronously: return once the kernel shows the JVM stopped.
        wait_until(
            lambda: self._state(proc) == "paused",
            timeout=SIGNAL_SEEN,
            interval=0.02,
            what=f"{node.name} to stop after SIGSTOP",
        )

    def resume(self, node: Node) -> None:
        proc = self._process(node)
        if proc is not None:
            proc.send_signal(signal.SIGCONT)
            wait_until(
                lambda: self._state(proc) != "paused",
                timeout=SIGNAL_SEEN,
                interval=0.02,
                what=f"{node.name} to run again after SIGCONT",
            )

    def _require(self, node: Node) -> psutil.Process:
        proc = self._process(node)
        if proc is None:
            raise ClusterNotRunning(f"{node.name} is not running: start it with `eoslab start {node.name}`.")
        return proc

    def down(self, timeout: float = NODE_STOP) -> None:
        # Brokers first, while the controllers can still move leadership (controlled shutdown).
        self._terminate(list(self.topology.brokers), timeout)
        self._terminate(list(self.topology.controllers), timeout)
        for node in self.topology.nodes:  # the next `up` starts every node as the topology says (as docker's does)
            self._overrides_file(node).unlink(missing_ok=True)

    def reset(self) -> None:
        self.down()
        for node in self.topology.nodes:
            shutil.rmtree(self.node_dir(node), ignore_errors=True)

    def logs(self, node: Node, lines: int = 50) -> str:
        path = self.log_file(node)
        if not path.is_file():
            return ""
        # Read back far enough for the lines asked for: a broker's start writes ~200 KB (replica
        # fetcher lines name every partition), so a fixed 256 KB window could not reach its beginning.
        window = max(256 * 1024, lines * 2048)
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - window))
            text = fh.read().decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    def died_during_start(self, node: Node) -> str | None:
        """Why a node that should be running is not, from its log (None if it runs)."""
        if self.is_alive(node):
            return None
        return first_error_line(self.logs(node, 200)) or f"exited; see {self.log_file(node)}"

    def list_files(self, node: Node, folder: str) -> list[tuple[str, int]]:
        path = self.host_data_path(node) / folder
        if not path.is_dir():
            raise PartitionFolderMissing(
                f"{node.name} has no folder {folder} in {self.host_data_path(node)}: "
                "check the topic and partition, and that this broker holds a replica."
            )
        return sorted((p.name, p.stat().st_size) for p in path.iterdir() if p.is_file())

    # -- tools --------------------------------------------------------------
    def tool_bootstrap_servers(self) -> str:
        return self.topology.bootstrap_servers()

    def run_tool(
        self, tool: str, args: list[str], *, node: Node | None = None, timeout: float = TOOL
    ) -> subprocess.CompletedProcess[str]:
        spec = TOOLS[tool]
        argv = [_java.java_executable(), f"@{self._tool_argfile()}", spec.main_class, *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
