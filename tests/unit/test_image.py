"""The local image's build context and the system script, without a Docker engine."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from eoslab import _image
from eoslab.cluster._backend import TOOLS
from eoslab.topology import KAFKA_IMAGE

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "system" / "docker.sh"


def test_every_tool_the_kit_runs_has_its_script_in_the_image():
    for tool in TOOLS.values():
        assert _image.SCRIPTS[tool.script] == tool.main_class


def test_the_context_digest_changes_with_any_input_and_only_then(tmp_path):
    jar = tmp_path / "a.jar"
    jar.write_bytes(b"jar")
    files = _image.context_files()
    one = _image.context_digest(files, [str(jar)], "sha256:base")
    assert one == _image.context_digest(dict(files), [str(jar)], "sha256:base")
    assert one != _image.context_digest(files, [str(jar)], "sha256:other-base")
    assert one != _image.context_digest({**files, "docker/run": b"changed"}, [str(jar)], "sha256:base")
    jar.write_bytes(b"another jar")
    assert one != _image.context_digest(files, [str(jar)], "sha256:base")


def test_the_context_holds_the_wrapper_entry_point_and_no_KAFKA_HOME(tmp_path):
    files = _image.context_files()
    run = files["docker/run"].decode()
    assert "kafka.docker.KafkaDockerWrapper setup" in run and "already formatted" in run
    # every KAFKA_* variable becomes a property: the image must not set one of its own
    env_lines = [ln for ln in files["Dockerfile"].decode().splitlines() if ln.startswith("ENV ")]
    assert env_lines and not any("KAFKA_" in ln for ln in env_lines)
    _image.write_context(tmp_path, files, [])
    assert os.access(tmp_path / "docker" / "run", os.X_OK) and os.access(tmp_path / "bin" / "kafka-topics.sh", os.X_OK)


def run_script(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env={**os.environ, **env}, timeout=120
    )


def test_system_script_changes_nothing_when_opted_out(tmp_path):
    proc = run_script(
        "ensure",
        EOSLAB_SYSTEM_INSTALL="0",
        DOCKER_HOST=f"unix://{tmp_path}/none.sock",
        EOSLAB_DOCKER_STATE=str(tmp_path / "state"),
    )
    assert proc.returncode == 0
    assert "docker tests will be skipped" in proc.stderr and "EOSLAB_SYSTEM_INSTALL=0 (opted out)" in proc.stderr
    assert not (tmp_path / "state").exists()


def test_system_script_stops_only_the_engine_it_recorded(tmp_path):
    state = tmp_path / "state"
    assert run_script("stop", EOSLAB_DOCKER_STATE=str(state)).returncode == 0  # nothing recorded: nothing stopped
    engine = subprocess.Popen(["sleep", "300"])  # stands for the dockerd that `ensure` started
    try:
        state.write_text(f"pid {engine.pid}\n")
        proc = run_script("stop", EOSLAB_DOCKER_STATE=str(state))
        assert proc.returncode == 0 and f"stopping dockerd (pid {engine.pid}" in proc.stderr
        assert engine.wait(timeout=30) == -signal.SIGTERM
        assert not state.exists()
    finally:
        if engine.poll() is None:
            engine.kill()
            time.sleep(0.1)


def test_ensure_builds_the_local_image_again_when_its_inputs_changed_and_takes_another_as_it_is(monkeypatch, capsys):
    import eoslab.cluster
    from eoslab.cli import _image as cli_image

    built: list[bool] = []

    def build_image(**_: object) -> _image.ImageBuild:
        built.append(True)
        return _image.ImageBuild(_image.LOCAL_IMAGE, 0.7, True, None)

    monkeypatch.setattr(eoslab.cluster, "docker_available", lambda: None)
    monkeypatch.setattr(_image, "image_exists", lambda name: True)
    monkeypatch.setattr(_image, "build_image", build_image)
    monkeypatch.setattr(_image, "kafka_image", lambda: _image.LOCAL_IMAGE)
    assert cli_image._ensure() == 0 and built == [True]  # here, but perhaps of older inputs: build is cached by them
    assert "up to date" in capsys.readouterr().out
    monkeypatch.setattr(_image, "kafka_image", lambda: KAFKA_IMAGE)
    assert cli_image._ensure() == 0 and built == [True]  # a pulled image is taken as it is
