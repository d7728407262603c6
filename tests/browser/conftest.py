"""The JupyterLab that `make lab` starts (same command line), on a free port, and Debian's Chromium.

The server runs `eoslab.course.lab_argv` (what `eoslab lab` execs) plus only what a test needs:
a free port, no browser of its own, a token, and settings/workspace folders of its own (so a
learner's JupyterLab layout is neither used nor changed, and autosave is off: running a notebook
in the browser must not write outputs into the committed notebook).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from eoslab._wait import wait_until
from eoslab.cluster import Cluster
from eoslab.course import lab_argv, lab_env

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("EOSLAB_ARTIFACTS") or ROOT / "test-artifacts") / "browser"
CHROMIUM_FLAGS = [
    # As this machine's browser tests start it: no GPU, no QUIC, and none of Chromium's own
    # background traffic (the network here is closed; those connections would fail by the dozen).
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_executable() -> str | None:
    for exe in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(exe):
            return path
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Lab:
    url: str
    token: str
    log: Path

    def api(self, path: str, method: str = "GET") -> int:
        req = urllib.request.Request(
            f"{self.url}{path}", headers={"Authorization": f"token {self.token}"}, method=method
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status)

    def shutdown_kernels(self) -> None:
        """End the kernels the browser started (a notebook's clients must not outlive the test)."""
        req = urllib.request.Request(f"{self.url}/api/kernels", headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            kernels = json.loads(resp.read())
        for k in kernels:
            self.api(f"/api/kernels/{k['id']}", method="DELETE")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def chromium() -> dict[str, object]:
    """Playwright's launch arguments for the system Chromium (skips, with the reason, without one)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the Python package playwright is not installed (it is in the dev extra: `make setup`)")
    path = chromium_executable()
    if path is None:
        pytest.skip(
            "no Chromium on this machine (chromium, chromium-browser, google-chrome): `make test` installs "
            "Debian's with tools/system/chromium.sh when it runs as root with apt-get; otherwise install it yourself"
        )
    return {"executable_path": path, "headless": True, "args": CHROMIUM_FLAGS}


@pytest.fixture(scope="module")
def lab(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    home = tmp_path_factory.mktemp("jupyterlab")
    settings = home / "settings" / "@jupyterlab" / "docmanager-extension"
    settings.mkdir(parents=True)
    (settings / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    port, token = _free_port(), secrets.token_hex(16)
    argv = lab_argv(
        ROOT,
        f"--port={port}",
        "--ServerApp.ip=127.0.0.1",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        f"--LabApp.user_settings_dir={home / 'settings'}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
    )
    log = home / "jupyterlab.log"
    with log.open("w") as out:
        # lab_env: the kit's settings defaults, as `eoslab lab` has them (no news toast over the cells)
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT, env=lab_env()
        )
    server = Lab(f"http://127.0.0.1:{port}", token, log)
    try:
        wait_until(
            lambda: proc.poll() is None and server.api("/api/status") == 200,
            timeout=90,  # a cold JupyterLab on 2 busy cores starts in 5-20 s
            what="JupyterLab (started as `make lab` starts it) to answer /api/status",
            describe=lambda: log.read_text()[-2000:],
        )
        yield server
    finally:
        try:
            server.shutdown_kernels()
        except OSError:
            pass  # the server is already gone; its kernels went with it
        os.killpg(proc.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        time.sleep(0.2)


def pytest_terminal_summary(terminalreporter) -> None:
    shots = sorted(ARTIFACTS.glob("*.png")) if ARTIFACTS.is_dir() else []
    if shots:
        terminalreporter.write_line(f"browser test screenshots ({len(shots)}): {ARTIFACTS}")
