"""A real kernel of this environment, as JupyterLab starts it: a restart, or a cluster that is down, in one sentence.

The cluster here is one that does not run (a free block of ports, an empty data folder), so the
shared test cluster keeps running: "down" is what a learner's laptop shows after `eoslab down`,
a sleep or an out-of-memory kill.
"""

from __future__ import annotations

import os
import queue
import signal
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager

from eoslab._ports import is_free
from eoslab.course import kernel
from eoslab.topology import Topology


def _free_offset() -> int:
    for offset in range(11000, 40000, 1000):
        if all(is_free(p) for p in Topology(port_offset=offset).all_ports()):
            return offset
    pytest.skip("no free block of cluster ports on this machine")


def _run(kc, code: str, timeout: float = 120) -> dict:
    """Execute ``code``; return its error content (ename, evalue, traceback) or {} when it succeeded."""
    msg_id = kc.execute(code)
    error: dict = {}
    while True:
        try:
            msg = kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer from the kernel within {timeout} s for {code!r}") from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "error":
            error = msg["content"]
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return error


@pytest.fixture
def kc(tmp_path, monkeypatch):
    assert kernel.install() == kernel.config_path()  # what `eoslab setup` does in this venv
    monkeypatch.setenv("EOSLAB_PORT_OFFSET", str(_free_offset()))
    monkeypatch.setenv("EOSLAB_DATA", str(tmp_path / "kafka-data"))
    km = KernelManager(kernel_name="python3")  # the kernel JupyterLab starts for the course's notebooks
    km.start_kernel(cwd=str(tmp_path), env=dict(os.environ))
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=120)
    yield km, client
    client.stop_channels()
    km.shutdown_kernel(now=True)


def _one_sentence(err: dict) -> str:
    assert len(err["traceback"]) == 1, err["traceback"]
    text = err["traceback"][0]
    assert "\n" not in text and "Traceback" not in text and text.endswith(".")
    return text


def test_a_kernel_that_died_says_to_run_the_setup_cell(kc):
    km, client = kc
    assert _run(client, "cluster = 'made by the Setup cell'\nprint(cluster)") == {}
    os.kill(km.provisioner.process.pid, signal.SIGKILL)  # the kernel dies, as on an out-of-memory kill
    km.restart_kernel(now=True)  # what JupyterLab does after "The kernel appears to have died"
    client.wait_for_ready(timeout=120)
    err = _run(client, "print(cluster.bootstrap_servers())")
    assert err["ename"] == "NameError"
    text = _one_sentence(err)
    assert "`cluster` is not defined because this kernel is new" in text and "# Setup" in text
    # After the Setup cell, a NameError is the learner's own again: IPython's usual traceback.
    assert _run(client, "cluster = 1") == {}
    assert len(_run(client, "print(typo)")["traceback"]) > 1


def test_a_cluster_that_is_down_says_what_to_run_and_other_errors_keep_their_traceback(kc):
    _, client = kc
    err = _run(client, "import eoslab\ncluster = eoslab.connect(start=False)")
    assert err["ename"] == "ClusterNotRunning"
    text = _one_sentence(err)
    assert text.startswith("The cluster is down (no broker runs") and "`eoslab up`" in text
    assert "your notebook and your topics are kept" in text
    err = _run(client, "from eoslab.cluster import Cluster\ncluster = Cluster()\ncluster.admin.topics(timeout=3)")
    assert err, "listing topics of a cluster that is down must fail"
    assert _one_sentence(err).startswith("The cluster is down")
    err = _run(client, "1 / 0")
    assert err["ename"] == "ZeroDivisionError" and len(err["traceback"]) > 1  # not the kit's business


def test_setup_writes_the_config_only_into_a_virtual_environment(tmp_path):
    path = kernel.install(str(tmp_path))
    assert path == Path(tmp_path) / "etc" / "ipython" / "ipython_kernel_config.py"
    assert "eoslab.course.kernel" in path.read_text()
    path.write_text("c.InteractiveShellApp.extensions = ['mine']\n")  # a config of the learner's own
    assert kernel.install(str(tmp_path)) is None and "mine" in path.read_text()
