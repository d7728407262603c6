"""One pinned Kafka release, resolved from the package's own pom."""

import os
import xml.etree.ElementTree as ET

import pytest

from eoslab import _jars
from eoslab._paths import pom_dir
from eoslab.errors import SetupError
from eoslab.topology import KAFKA_IMAGE, KAFKA_VERSION

NS = {"m": "http://maven.apache.org/POM/4.0.0"}


def _pom(name):
    return ET.parse(pom_dir(name) / "pom.xml").getroot()


def test_pom_pins_the_same_kafka_as_the_image():
    assert _pom("kafka").find("m:properties/m:kafka.version", NS).text == KAFKA_VERSION
    assert KAFKA_IMAGE.endswith(":" + KAFKA_VERSION)
    assert KAFKA_VERSION.startswith("4.")


def test_tools_leave_connect_runtime_out():
    excluded = [e.find("m:artifactId", NS).text for e in _pom("kafka").iter(f"{{{NS['m']}}}exclusion")]
    assert "connect-runtime" in excluded


def test_exactly_one_slf4j_binding_is_enforced():
    _jars.check_single_log4j_binding(["/x/log4j-slf4j-impl-2.24.3.jar", "/x/kafka-clients.jar"])
    with pytest.raises(SetupError):
        _jars.check_single_log4j_binding(["/x/log4j-slf4j-impl-2.24.3.jar", "/x/slf4j-reload4j-1.7.jar"])
    with pytest.raises(SetupError):
        _jars.check_single_log4j_binding(["/x/kafka-clients.jar"])


def test_no_maven_and_no_kafka_home_is_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("EOSLAB_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn here
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    with pytest.raises(SetupError, match=r"Maven \(`mvn`\) is needed"):
        _jars.kafka_jars()


def test_kafka_home_without_jars_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path))
    with pytest.raises(SetupError, match="has no libs/kafka_2.13"):
        _jars.kafka_jars()


def _kafka_home(root, release):
    libs = root / "libs"
    libs.mkdir()
    for name in (f"kafka_2.13-{release}.jar", f"kafka-clients-{release}.jar"):
        (libs / name).write_bytes(b"")
    return libs


def test_kafka_home_libs_are_used_when_set(tmp_path, monkeypatch):
    libs = _kafka_home(tmp_path, KAFKA_VERSION)
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path))
    assert _jars.kafka_jars() == sorted(str(p) for p in libs.glob("*.jar"))
    assert _jars.kafka_clients_jar().name == f"kafka-clients-{KAFKA_VERSION}.jar"


@pytest.mark.parametrize("release", ["4.1.2", "4.3.1", "3.9.2"])
def test_kafka_home_of_another_release_is_one_sentence(tmp_path, monkeypatch, release):
    _kafka_home(tmp_path, release)
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path))
    with pytest.raises(SetupError) as caught:
        _jars.kafka_jars()
    msg = str(caught.value)
    assert msg == (
        f"KAFKA_HOME={tmp_path} is Kafka {release}, but this kit is built for Kafka {KAFKA_VERSION}: point "
        f"KAFKA_HOME at a Kafka {KAFKA_VERSION} install, or unset it (`make setup` fetches the jars)."
    )


def test_cached_classpath_is_ignored_when_a_jar_vanished(tmp_path):
    cache = tmp_path / "cp"
    jar = tmp_path / "a.jar"
    jar.write_bytes(b"")
    cache.write_text(f"{jar}{os.pathsep}{tmp_path / 'gone.jar'}")
    assert _jars._read_cached(cache) is None
    cache.write_text(str(jar))
    assert _jars._read_cached(cache) == [str(jar)]
