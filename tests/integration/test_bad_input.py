"""Bad input: one clear sentence, a non-zero exit, nothing half-started left running.

Each case runs the real `eoslab` command in a subprocess with its own data folder
(EOSLAB_DATA), beside the session's running cluster.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import psutil
import pytest

from eoslab.topology import TOPOLOGY

pytestmark = pytest.mark.cluster


def eoslab(*args, env=None, timeout=120):
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "eoslab.cli", *args], capture_output=True, text=True, env=full_env, timeout=timeout
    )


def _one_sentence(proc):
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert err.startswith("eoslab: "), err
    assert "Traceback" not in err and "\tat " not in err, err
    assert len(err.splitlines()) == 1, err
    return err


def _jvms_under(path):
    return [p.pid for p in psutil.process_iter(["cmdline"]) if any(str(path) in c for c in (p.info["cmdline"] or []))]


def test_port_in_use_names_the_port_and_starts_nothing(cluster, tmp_path):
    # The session's cluster holds every port: a second cluster from another folder must refuse.
    proc = eoslab("up", env={"EOSLAB_DATA": str(tmp_path)})
    err = _one_sentence(proc)
    port = cluster.topology.controllers[0].controller_port  # 19101 at offset 0
    pid = next(r.pid for r in cluster.status() if r.name == "controller-1")
    assert f"Port {port} (needed by controller-1) is held by another eoslab cluster (pid {pid}, started from " in err
    assert "stop it with `eoslab down` there (`make down`), or move this one's ports with `export EOSLAB_PORT_" in err
    assert _jvms_under(tmp_path) == []


def test_data_folder_of_another_cluster(cluster, tmp_path):
    data = tmp_path / "broker-1" / "data"
    data.mkdir(parents=True)
    (data / "meta.properties").write_text("version=1\ncluster.id=SomeOtherClusterId0000\nnode.id=1\n")
    err = _one_sentence(eoslab("up", env={"EOSLAB_DATA": str(tmp_path)}))
    assert "belongs to another cluster" in err and "eoslab reset" in err
    assert _jvms_under(tmp_path) == []


def test_half_written_data_folder(cluster, tmp_path):
    data = tmp_path / "controller-2" / "data"
    data.mkdir(parents=True)
    (data / "bootstrap.checkpoint").write_bytes(b"\0")
    err = _one_sentence(eoslab("up", env={"EOSLAB_DATA": str(tmp_path)}))
    assert "half-written" in err and "eoslab reset" in err


def test_no_java(cluster, tmp_path):
    env = {"EOSLAB_DATA": str(tmp_path), "PATH": os.path.dirname(sys.executable), "JAVA_HOME": ""}
    err = _one_sentence(eoslab("up", env=env))
    assert "No Java found: install a JDK 17+" in err


def test_old_java(cluster, tmp_path):
    fake = tmp_path / "jdk" / "bin" / "java"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    err = _one_sentence(eoslab("up", env={"EOSLAB_DATA": str(tmp_path / "d"), "JAVA_HOME": str(tmp_path / "jdk")}))
    assert "needs Java 17 or newer" in err and "Java 11" in err


def test_no_maven_and_no_kafka_home(cluster, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    java = psutil.Process(cluster.status()[0].pid).exe()
    (bindir / "java").symlink_to(java)
    env = {
        "EOSLAB_DATA": str(tmp_path / "d"),
        "EOSLAB_CACHE": str(tmp_path / "cache"),
        "KAFKA_HOME": "",
        "PATH": f"{bindir}:{os.path.dirname(sys.executable)}",
        "JAVA_HOME": "",
    }
    err = _one_sentence(eoslab("setup", env=env))
    assert "Maven (`mvn`) is needed" in err and "KAFKA_HOME" in err


def test_docker_backend_without_an_engine(tmp_path):
    # DOCKER_HOST at a socket nobody serves: "installed but not running" where the docker client is
    # here, "not installed" where it is not; either way one sentence that says what to do.
    env = {"EOSLAB_DATA": str(tmp_path), "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    err = _one_sentence(eoslab("--backend", "docker", "up", env=env))
    assert "The docker backend needs Docker, but" in err
    assert "no Docker engine answers" in err or "`docker` command is not installed" in err
    assert "start Docker Desktop/the docker service, or use the local backend (unset EOSLAB_BACKEND)" in err


@pytest.mark.parametrize("command", [["status"], ["kill", "broker-1"], ["pause", "broker-2"], ["stop", "broker-3"]])
def test_commands_that_need_a_running_cluster(tmp_path, command):
    err = _one_sentence(eoslab(*command, env={"EOSLAB_DATA": str(tmp_path)}))
    assert err == "eoslab: The cluster is not running: start it with `eoslab up` (or `make lab`)."


def test_unknown_node_name(cluster):
    err = _one_sentence(eoslab("kill", "broker-9"))
    assert "There is no node 'broker-9'" in err and "broker-3" in err
    assert all(r.state == "running" for r in cluster.status())


def test_records_to_a_topic_that_does_not_exist_are_one_sentence_saying_to_create_it(cluster):
    """The kit's writer (module 03's seed_input, module 05's inputs, lab 05's) on a topic never created: the
    course's brokers run with auto.create.topics.enable=false, so the record fails once librdkafka's
    topic.metadata.propagation.max.ms has passed, and flush() still returns 0."""
    import uuid

    from confluent_kafka import Producer

    from eoslab.clients import write_all
    from eoslab.errors import ClientError

    topic = f"never-created-{uuid.uuid4().hex[:6]}"
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers(), "topic.metadata.propagation.max.ms": 500})
    with pytest.raises(ClientError) as failed:
        write_all(producer, topic, [b"x"], partition=0)
    said = str(failed.value)
    assert re.fullmatch(
        rf"1 of 1 records to {topic} were not written \(_?UNKNOWN_TOPIC\w*\): create {topic} first \(.*\)\.", said
    ), said
    assert topic not in cluster.admin.client.list_topics(timeout=15).topics  # nothing created it on the way


def test_every_bad_input_left_the_session_cluster_alone(cluster):
    assert [r.state for r in cluster.status()] == ["running"] * len(TOPOLOGY.nodes)


def test_auditing_a_fault_run_whose_topics_are_gone_is_one_sentence(cluster, topic_name):
    """After `eoslab reset` the fault run's output topics are gone: notebook 05's audit says so and what to do,
    before Spark would fail with a page of Java (the check runs before Spark is touched: no session here)."""
    from eoslab.analysis import audit_outputs
    from eoslab.runs import NoRunsError

    cluster.admin.create_topic(topic_name, replica_assignment=[[1, 2, 3]])
    with pytest.raises(NoRunsError) as gone:
        audit_outputs(None, cluster.bootstrap_servers(), [topic_name, f"{topic_name}-reset"])  # type: ignore[arg-type]
    err = str(gone.value)
    assert len(err.splitlines()) == 1 and err.endswith("then this cell."), err
    assert "1 of the 2 output topics" in err and f"{topic_name}-reset" in err and "eoslab bench faults" in err
