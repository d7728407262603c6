"""Who holds a port, in the sentence a learner reads when the kit needs it: the kit's own cluster from another folder,
a JupyterLab, or any other process, each with what frees it."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eoslab._ports import LOOPBACK, check_free, free_port, is_free
from eoslab.errors import PortInUseError


def _listen(tmp_path: Path, argv0_hint: str) -> tuple[subprocess.Popen[bytes], int]:
    """A child listening on a free port, whose command line carries ``argv0_hint`` (what the holder is judged by)."""
    port = free_port()
    code = (
        "import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(port), argv0_hint], cwd=tmp_path)
    deadline = time.monotonic() + 10
    while is_free(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc, port


@pytest.mark.parametrize(
    ("hint", "who", "todo"),
    [
        ("kafka.Kafka", "another eoslab cluster (pid {pid}, started from {cwd})", "stop it with `eoslab down` there"),
        ("jupyter-lab", "a JupyterLab (pid {pid})", "give this one `--port=8890`"),
        ("something-else", "pid {pid} (python", "stop that process, or move this one's ports with `export EOSLAB_PORT"),
    ],
)
def test_a_taken_port_is_one_sentence_naming_its_holder_and_what_frees_it(tmp_path, hint, who, todo):
    proc, port = _listen(tmp_path, hint)
    try:
        with pytest.raises(PortInUseError) as err:
            check_free([port], owner="broker-1")
        said = str(err.value)
        assert said.startswith(f"Port {port} (needed by broker-1) is held by {who.format(pid=proc.pid, cwd=tmp_path)}")
        assert todo in said and said.endswith(".") and "\n" not in said
    finally:
        proc.kill()
        proc.wait()


def test_free_ports_pass() -> None:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        port = s.getsockname()[1]
    check_free([port], owner="broker-1")
