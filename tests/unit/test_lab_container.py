"""The lab container (issue 24): its compose service, the kit in compose mode, the image's Dockerfile, and the
JupyterLab it (and `make lab`) opens: no news toast, no build or data folders in the file browser."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from eoslab import _image, _lab_image
from eoslab._compose import render_compose
from eoslab._compose_lab import DOCKERFILE, REGISTRY_BASE, lab_ports
from eoslab.course import HIDE_GLOBS, lab_argv, lab_env
from eoslab.topology import Topology, bind_host, in_compose

ROOT = Path(__file__).resolve().parents[2]
TOPOLOGY = Topology()


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, object]]:
    return yaml.safe_load(render_compose())["services"]


def test_the_lab_service_runs_the_lab_image_beside_the_nodes_in_its_own_profile(services):
    lab = services["lab"]
    assert lab["profiles"] == ["lab"]  # `docker compose up` (and the kit's own `up`) leaves it alone
    assert lab["image"] == "${EOSLAB_LAB_IMAGE:-" + _lab_image.LAB_IMAGE + "}"
    assert lab["build"]["context"] == "."
    assert (ROOT / lab["build"]["dockerfile"]).is_file()
    assert lab["build"]["args"]["BASE"] == "${EOSLAB_LAB_BASE:-" + REGISTRY_BASE + "}"
    assert lab["depends_on"] == {b.name: {"condition": "service_healthy"} for b in TOPOLOGY.brokers}
    assert lab["environment"]["EOSLAB_BACKEND"] == "docker"
    assert lab["environment"]["EOSLAB_IN_COMPOSE"] == "1"
    assert lab["volumes"] == [".:/course", "/var/run/docker.sock:/var/run/docker.sock"]


def test_the_lab_service_publishes_jupyterlab_and_the_proxy_on_loopback_only(services):
    published = services["lab"]["ports"]
    assert published[0] == "127.0.0.1:${EOSLAB_LAB_PORT:-8888}:8888"  # another Jupyter on 8888: EOSLAB_LAB_PORT=8890
    assert published[1:] == [f"127.0.0.1:{p}:{p}" for p in lab_ports(TOPOLOGY)[1:]]
    assert 8888 in lab_ports(TOPOLOGY) and TOPOLOGY.proxy_control_port in lab_ports(TOPOLOGY)
    assert {b.proxy_front_port for b in TOPOLOGY.brokers} <= set(lab_ports(TOPOLOGY))
    nodes = {p.split(":")[1] for n in TOPOLOGY.nodes for p in services[n.name]["ports"]}
    assert not nodes & {str(p) for p in lab_ports(TOPOLOGY)}  # no port published twice


@pytest.mark.parametrize("broker", TOPOLOGY.brokers, ids=lambda b: b.name)
def test_a_broker_is_healthy_once_its_internal_listener_accepts(services, broker):
    check = services[broker.name]["healthcheck"]
    assert check["test"][:3] == ["CMD", "bash", "-c"]
    assert check["test"][3] == f"exec 3<>/dev/tcp/127.0.0.1/{broker.internal_port}"
    assert check["interval"] == "2s"


def test_a_rendering_beside_another_cluster_has_no_lab_service():
    assert "lab" not in yaml.safe_load(render_compose(Topology(port_offset=500)))["services"]


def test_the_dockerfile_default_base_is_the_pinned_registry_base_and_the_kit_is_the_last_layer():
    text = (ROOT / DOCKERFILE).read_text()
    assert re.search(r"^ARG BASE=(\S+)$", text, re.M).group(1) == REGISTRY_BASE  # type: ignore[union-attr]
    steps = [ln.split()[0] for ln in text.splitlines() if re.match(r"^(RUN|COPY) ", ln)]
    jdk, kit = text.index("openjdk-17-jdk-headless"), text.index("COPY eoslab /opt/eoslab/src/eoslab")
    assert jdk < text.index("pip install") < text.index("COPY eoslab/_java") < kit
    assert steps[-5:] == ["COPY", "COPY", "COPY", "COPY", "RUN"]  # the kit and its install come last
    assert text.index("COPY --from=deps /opt/eoslab /opt/eoslab") < kit  # the venv and jars, not the wheels
    assert re.findall(r"^FROM (.+)$", text, re.M) == ["${BASE} AS system", "system AS deps", "system"]
    assert "docker-cli docker-compose" in text and "trixie" in text  # compose v2 the way tools/system/docker.sh does


def test_the_lab_image_leaves_out_the_developer_tools_only(monkeypatch):
    pins = ["pandas==2.2.3", "ruff==0.17.6", "mypy==2.4.1", "playwright==1.65.2", "Jupyterlab==4.6.6", "pip==25"]
    monkeypatch.setattr("eoslab.course.pinned_requirements", lambda: pins)
    assert _lab_image.lab_requirements() == ["pandas==2.2.3", "Jupyterlab==4.6.6", "pip==25"]
    deps = (ROOT / "pyproject.toml").read_text().split("dependencies = [", 1)[1].split("]", 1)[0]
    assert not any(f'"{name}' in deps for name in _lab_image.DEV_ONLY)


def test_the_lab_image_digest_covers_the_kit_files():
    files = _lab_image.kit_files(ROOT)
    assert {"pyproject.toml", "README.md", DOCKERFILE, "eoslab/_resources/lab/entrypoint.sh"} <= set(files)
    assert not any("__pycache__" in f or f.endswith(".pyc") for f in files)
    changed = dict(files, **{"eoslab/topology.py": files["eoslab/topology.py"] + b"#"})
    assert _image.context_digest(files, [], "base") != _image.context_digest(changed, [], "base")


def test_an_unchanged_digest_builds_nothing(monkeypatch):
    calls: list[str] = []

    def docker() -> str:
        calls.append("docker")
        return "docker"

    monkeypatch.setattr(_image, "image_label", lambda image, label: "abc")
    monkeypatch.setattr(_image, "docker", docker)
    assert _image.build("eoslab/lab:x", "abc", lambda ctx: calls.append("write"), force=False) is False
    assert calls == []


def test_outside_the_lab_container_the_kit_uses_loopback(monkeypatch):
    monkeypatch.delenv("EOSLAB_IN_COMPOSE", raising=False)
    assert not in_compose() and bind_host() == "127.0.0.1"
    assert TOPOLOGY.bootstrap_servers() == "127.0.0.1:19091,127.0.0.1:19092,127.0.0.1:19093"
    assert TOPOLOGY.brokers[0].direct_address() == ("127.0.0.1", 19091)
    assert TOPOLOGY.brokers[0].proxied_address() == ("127.0.0.1", 19291)


def test_in_the_lab_container_direct_clients_use_the_internal_listeners_by_name(monkeypatch):
    monkeypatch.setenv("EOSLAB_IN_COMPOSE", "1")
    assert in_compose() and bind_host() == "0.0.0.0"
    assert TOPOLOGY.bootstrap_servers() == "broker-1:19191,broker-2:19192,broker-3:19193"
    # the proxy's front ports stay 127.0.0.1: in the container the proxy itself, on the host the published port
    assert TOPOLOGY.bootstrap_servers(proxied=True) == "127.0.0.1:19391,127.0.0.1:19392,127.0.0.1:19393"
    assert TOPOLOGY.brokers[1].direct_address() == ("broker-2", 19192)
    assert TOPOLOGY.controllers[0].direct_address() == ("controller-1", 19101)
    assert TOPOLOGY.brokers[2].proxied_address() == ("broker-3", 19293)


def _hidden_by(argv: list[str]) -> list[str]:
    from jupyter_server.serverapp import ServerApp

    app = ServerApp()
    app.parse_command_line([a for a in argv[3:-1] if a.startswith("--ContentsManager.")])
    return list(app.config.ContentsManager.hide_globs)


@pytest.mark.parametrize(
    ("name", "listed"),
    [
        ("eoslab.egg-info", False),
        ("kafka-data", False),
        ("kafka-data-gw1", False),
        ("runs", False),
        ("build", False),
        ("test-artifacts", False),
        ("__pycache__", False),
        ("notebooks", True),
        ("labs", True),
        ("README.md", True),
        ("docker-compose.yml", True),
    ],
)
def test_the_file_browser_lists_the_course_not_build_or_data_folders(name, listed):
    from jupyter_server.services.contents.filemanager import FileContentsManager

    manager = FileContentsManager(root_dir=str(ROOT), hide_globs=_hidden_by(lab_argv(ROOT)))
    assert manager.should_list(name) is listed
    assert set(HIDE_GLOBS) == set(_hidden_by(lab_argv(ROOT)))


def test_jupyterlab_gets_the_kits_settings_defaults_no_news_toast(monkeypatch):
    from jupyterlab_server.settings_utils import _get_overrides

    env = lab_env({"PATH": "/usr/bin"})
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", env["JUPYTER_CONFIG_PATH"])
    overrides, error = _get_overrides("/nonexistent-app-settings")
    assert not error
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


def test_lab_env_keeps_a_learners_own_config_path_first():
    env = lab_env({"JUPYTER_CONFIG_PATH": "/mine"})
    assert env["JUPYTER_CONFIG_PATH"].split(":")[0] == "/mine"
    assert lab_env(env)["JUPYTER_CONFIG_PATH"] == env["JUPYTER_CONFIG_PATH"]  # added once


def test_the_entrypoint_is_posix_sh_and_drops_root_for_the_course_folders_owner():
    script = ROOT / "eoslab/_resources/lab/entrypoint.sh"
    assert subprocess.run(["sh", "-n", str(script)], capture_output=True).returncode == 0
    text = script.read_text()
    assert "stat -c %u /course" in text and "setpriv --reuid" in text and "docker.sock" in text


COPY_CLASSPATH = ROOT / "eoslab/_resources/lab/copy-classpath.sh"


def _maven_classpath(tmp_path: Path, names: list[str]) -> Path:
    """A classpath file as `mvn dependency:build-classpath -Dmdep.outputFile=` writes it: one line, ':'-separated,
    NO newline at its end, naming jars that exist."""
    repo = tmp_path / "m2"
    repo.mkdir()
    jars = []
    for name in names:
        (repo / name).write_bytes(b"PK")
        jars.append(str(repo / name))
    cp = tmp_path / "set.cp"
    cp.write_text(":".join(jars))
    return cp


def test_the_registry_builds_jar_copy_keeps_the_last_jar_of_mavens_classpath(tmp_path):
    # The registry path's inline `tr ':' '\n' < cp | while read -r jar` dropped the last entry (no newline after
    # it): the image's Spark-Kafka set lost commons-pool2 and notebook 04's Spark cell failed inside the container.
    names = ["spark-sql-kafka-0-10_2.13-4.2.0.jar", "kafka-clients-3.9.2.jar", "commons-pool2-2.13.1.jar"]
    cp = _maven_classpath(tmp_path, names)
    dest = tmp_path / "jars" / "spark-kafka-4.2.0"
    r = subprocess.run(["sh", str(COPY_CLASSPATH), str(cp), str(dest)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (dest / "classpath.txt").read_text().split() == names
    assert sorted(p.name for p in dest.glob("*.jar")) == sorted(names)


def test_the_registry_builds_jar_copy_fails_on_a_missing_jar(tmp_path):
    cp = _maven_classpath(tmp_path, ["a.jar", "b.jar"])
    cp.write_text(cp.read_text() + ":" + str(tmp_path / "m2" / "gone.jar"))
    r = subprocess.run(["sh", str(COPY_CLASSPATH), str(cp), str(tmp_path / "dest")], capture_output=True, text=True)
    assert r.returncode != 0


def test_the_dockerfile_copies_mavens_jars_with_the_tested_script():
    text = (ROOT / DOCKERFILE).read_text()
    assert "eoslab-copy-classpath /tmp/$name.cp $dest/$name" in text
    assert "while read" not in text  # the inline loop that dropped the last jar
    assert subprocess.run(["sh", "-n", str(COPY_CLASSPATH)], capture_output=True).returncode == 0


def test_a_copy_of_the_course_on_other_ports_runs_its_lab_service_there():
    topo = Topology(port_offset=4050)
    services = yaml.safe_load(render_compose(topo, lab=True))
    lab = services["services"]["lab"]
    assert services["name"] == "eoslab-4050" and lab["container_name"] == "eoslab-4050-lab"
    assert lab["ports"][0] == "127.0.0.1:${EOSLAB_LAB_PORT:-12938}:8888"  # 8888 inside, 8888 + 4050 outside
    assert lab["ports"][1:] == [f"127.0.0.1:{p}:{p}" for p in lab_ports(topo)[1:]]
    assert lab["environment"]["EOSLAB_PORT_OFFSET"] == "4050"


@pytest.mark.parametrize(
    ("args", "port"),
    [
        ([], 8888),
        (["--port=8890", "--no-browser"], 8890),
        (["--port", "9000"], 9000),
        (["--ServerApp.port=9001"], 9001),
    ],
)
def test_the_port_jupyterlab_tries_first(args, port):
    from eoslab.course import lab_port

    assert lab_port(args) == port
