"""No Java, or a Java older than 17: one sentence that says what to do."""

import pytest

from eoslab import _java
from eoslab.errors import SetupError


@pytest.fixture(autouse=True)
def _fresh_cache():
    _java.java_executable.cache_clear()
    _java.java_major.cache_clear()
    yield
    _java.java_executable.cache_clear()
    _java.java_major.cache_clear()


def _fake_java(tmp_path, version_line):
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    java.chmod(0o755)
    return tmp_path


def test_no_java(tmp_path, monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SetupError, match=r"^No Java found: install a JDK 17\+"):
        _java.java_executable()


def test_java_11_is_refused(tmp_path, monkeypatch):
    home = _fake_java(tmp_path, 'openjdk version "11.0.22" 2024-01-16')
    monkeypatch.setenv("JAVA_HOME", str(home))
    with pytest.raises(SetupError, match="needs Java 17 or newer, but .* is Java 11"):
        _java.java_executable()


def test_java_8_version_scheme(tmp_path):
    home = _fake_java(tmp_path, 'java version "1.8.0_392"')
    assert _java.java_major(str(home / "bin" / "java")) == 8


def test_java_17_is_accepted(tmp_path, monkeypatch):
    home = _fake_java(tmp_path, 'openjdk version "17.0.15" 2025-04-15')
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert _java.java_executable() == str(home / "bin" / "java")
