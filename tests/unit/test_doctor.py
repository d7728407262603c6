"""`eoslab doctor` on this machine, and each check's failure as the one sentence a learner reads."""

from __future__ import annotations

import re
import socket

import pytest
from _free_ports import free_offset

from eoslab import _java
from eoslab.cli import main
from eoslab.course import _doctor, doctor
from eoslab.topology import Topology

NAMES = ["platform", "Python", "Java", "memory", "ports", "CPUs", "disk", "Kafka jars", "Docker", "Chromium", "kcat"]


def _one_sentence(text: str) -> bool:
    return text.endswith(".") and "\n" not in text and not re.search(r"[.!?]\s+[A-Z]", text)


def test_every_check_runs_here_and_the_report_reads_one_line_each(capsys):
    report = doctor()
    assert [c.name for c in report] == NAMES
    for c in report:
        assert c.ok or _one_sentence(c.todo), c
        assert c.todo == "" or not c.ok
    text = str(report)
    assert len(text.splitlines()) == len(NAMES) + 1
    assert text.splitlines()[-1].startswith("This machine is ")
    assert "<table>" in report._repr_html_()
    rc = main(["doctor"])
    assert rc == (0 if report.ready else 1)
    assert capsys.readouterr().out.count("\n") == len(NAMES) + 1


def test_a_port_taken_by_another_program_fails_with_the_offset_to_use(monkeypatch):
    offset = free_offset()
    topology = Topology(port_offset=offset)
    assert _doctor.check_ports(topology).ok
    port = topology.brokers[0].client_port
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()
        monkeypatch.setenv("EOSLAB_PORT_OFFSET", str(offset))
        check = _doctor.check_ports(topology)
    assert not check.ok and check.required
    assert str(port) in check.found and "broker-1" in check.found
    assert f"EOSLAB_PORT_OFFSET={offset + 1000}" in check.todo and _one_sentence(check.todo)


def test_no_java_no_maven_no_docker_no_chromium(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    monkeypatch.setenv("EOSLAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("EOSLAB_OFFLINE", str(tmp_path / "no-bundle"))
    _java.java_executable.cache_clear()
    try:
        java = _doctor.check_java()
    finally:
        _java.java_executable.cache_clear()
    assert not java.ok and java.required and _one_sentence(java.todo) and "JDK" in java.todo
    jars = _doctor.check_jars()
    assert not jars.ok and "Maven" in jars.todo and _one_sentence(jars.todo)
    chromium = _doctor.check_chromium()
    assert not chromium.ok and not chromium.required and "chromium.sh" in chromium.todo
    kcat = _doctor.check_kcat()  # a note, never a requirement: one optional cell of module 04 uses it
    assert (kcat.ok, kcat.required, kcat.mark) == (False, False, "note") and _one_sentence(kcat.todo)
    monkeypatch.setenv("EOSLAB_BACKEND", "local")
    assert _doctor.check_docker().ok  # the local backend does not need Docker
    monkeypatch.setenv("EOSLAB_BACKEND", "docker")
    docker = _doctor.check_docker()
    assert not docker.ok and docker.required and _one_sentence(docker.todo)
    report = _doctor.Report([java, chromium, kcat])
    assert not report.ready and "FAIL  Java" in str(report) and "note  Chromium" in str(report)
    assert "note  kcat" in str(report) and _doctor.Report([kcat]).ready


def test_a_jre_without_javac_fails_the_java_check_for_module_03(monkeypatch, tmp_path):
    import shutil

    real = shutil.which("java")
    if real is None or _java.java_major(real) < 17:
        pytest.skip("needs a Java 17+ on PATH to stand in for a JRE")
    jre = tmp_path / "jre" / "bin"
    jre.mkdir(parents=True)
    (jre / "java").symlink_to(real)  # a java with no javac beside it, and none on PATH
    monkeypatch.setenv("PATH", str(jre))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    _java.java_executable.cache_clear()
    try:
        java = _doctor.check_java()
    finally:
        _java.java_executable.cache_clear()
    assert not java.ok and java.required and "no javac" in java.found
    assert "module 03" in java.todo and "JDK" in java.todo and _one_sentence(java.todo)


def test_too_little_memory_says_how_much(monkeypatch):
    monkeypatch.setattr(_doctor, "MIN_FREE_MB", 10**9)
    check = _doctor.check_memory()
    assert not check.ok and "MB are free" in check.todo and _one_sentence(check.todo)


@pytest.mark.parametrize(
    ("system", "release", "backend", "ok", "said"),
    [
        ("Linux", "6.18.44", "local", True, "Linux (six JVMs on this machine): README's Linux row, the one CI tests"),
        ("Linux", "5.15.167.4-microsoft-standard-WSL2", "docker", True, "Windows, inside WSL2 (six containers)"),
        ("Darwin", "24.1.0", "docker", True, "macOS (six containers): README's macOS row, not tested by CI"),
        ("Windows", "10", "local", False, "Windows, natively"),
    ],
)
def test_doctor_names_the_platform_row_a_learner_is_in(system, release, backend, ok, said):
    check = _doctor.platform_row(system, release, backend)
    assert check.ok is ok and check.found.startswith(said), check
    assert check.ok or _one_sentence(check.todo) and "WSL2" in check.todo
    if system == "Darwin":
        assert "JDK 17" in check.found  # docker does not spare macOS its JDK (Spark, the Java client)


def test_doctor_in_the_lab_container_names_its_row_whatever_the_host(monkeypatch):
    check = _doctor.platform_row("Linux", "6.10.14-linuxkit", "docker", in_container=True)  # Docker Desktop's VM
    assert check.ok and check.found.startswith("the lab container") and "any OS with Docker" in check.found
    monkeypatch.setenv("EOSLAB_IN_COMPOSE", "1")
    assert _doctor.check_platform().found.startswith("the lab container")
    monkeypatch.setenv("EOSLAB_IN_COMPOSE", "0")
    assert not _doctor.check_platform().found.startswith("the lab container")
