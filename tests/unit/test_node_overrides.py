"""A node restarted with settings on top of the topology's (``Cluster.reconfigure``, module 07's mistake 9): both
backends record them per node until a start with ``{}`` or a ``down``; the local backend renders them into the node's
``server.properties``, the docker backend into a compose file that recreates the one service with them. The cluster
side (the broker runs with them, ``eoslab heal`` undoes them) is tests/integration/m07/test_txn_id_expiry.py."""

from __future__ import annotations

import json
import subprocess

import pytest

from eoslab.cluster import DockerBackend, LocalBackend, _overrides
from eoslab.errors import ClusterError
from eoslab.topology import Topology

SHORT = {"transactional.id.expiration.ms": "10000"}


def test_local_start_renders_the_settings_until_a_plain_start_or_a_down(tmp_path, monkeypatch) -> None:
    backend = LocalBackend(Topology(port_offset=500), root=tmp_path)
    node = backend.topology.broker(2)
    spawned: list[str] = []
    monkeypatch.setattr(backend, "_spawn", lambda n: spawned.append(backend._props_file(n).read_text()))
    monkeypatch.setattr(backend, "_format_all", lambda todo: None)
    monkeypatch.setattr(backend, "_argfiles", lambda: None)
    monkeypatch.setattr("eoslab.cluster._local._java.java_executable", lambda: "java")
    monkeypatch.setattr("eoslab.cluster._local._ports.check_free", lambda ports, owner: None)
    (tmp_path / "jvm.args").write_text("")

    backend.start(node, SHORT)
    assert "transactional.id.expiration.ms=10000\n" in spawned[-1]
    assert backend.overrides(node) == SHORT
    backend.start(node)  # None: as it was last started (a kill and a start keep them)
    assert "transactional.id.expiration.ms=10000\n" in spawned[-1]
    backend.start(node, {})
    assert "transactional.id.expiration" not in spawned[-1] and backend.overrides(node) == {}
    backend.start(node, SHORT)
    monkeypatch.setattr(backend, "_terminate", lambda nodes, timeout: None)
    backend.down()
    assert backend.overrides(node) == {}  # the next `up` starts every node as the topology says


def test_docker_start_with_settings_recreates_the_one_service_with_them(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EOSLAB_DATA", str(tmp_path))
    backend = DockerBackend(Topology(port_offset=500), compose_cmd=["docker", "compose", "-f", "base.yml"], image="x")
    node = backend.topology.broker(3)
    calls: list[list[str]] = []
    extra: list[dict] = []

    def run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        calls.append(argv)
        if "-f" in argv[4:]:
            extra.append(json.loads(open(argv[argv.index("-f", 4) + 1]).read()))
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(backend, "_run", run)
    backend.start(node, SHORT)
    assert calls[-1][:4] == ["docker", "compose", "-f", "base.yml"]
    assert calls[-1][6:] == ["up", "--detach", "--no-deps", "--force-recreate", "--wait", "--wait-timeout", "120",
                             "broker-3"]  # fmt: skip
    assert extra[-1] == {"services": {"broker-3": {"environment": {"KAFKA_TRANSACTIONAL_ID_EXPIRATION_MS": "10000"}}}}
    assert backend.overrides(node) == SHORT
    backend.start(node)  # None: `docker compose start`, the container keeps what it was created with
    assert calls[-1][-2:] == ["start", "broker-3"] and backend.overrides(node) == SHORT
    backend.start(node, {})  # created again from the compose file alone
    assert "-f" not in calls[-1][4:] and calls[-1][-1] == "broker-3" and backend.overrides(node) == {}
    backend.start(node, SHORT)
    backend.down()
    assert backend.overrides(node) == {}


def test_a_name_that_is_not_a_setting_is_refused_in_one_sentence(tmp_path) -> None:
    with pytest.raises(ClusterError, match="not a Kafka setting's name"):
        _overrides.write(tmp_path / "o.json", {"transactional.id.expiration.ms=1": "2"})
    assert _overrides.read(tmp_path / "o.json") == {}
