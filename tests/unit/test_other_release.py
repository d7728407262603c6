"""A Kafka of another release than the pinned one is refused in one sentence, not a traceback: a KAFKA_HOME
of another release (local backend) and an image whose tag names another release (docker backend).

The kit names tools' classes, parses their output and states facts of one release (docs/versions.md), so
running it on another would fail later and obscurely (DumpLogSegments' class moved in 4.3, the
transaction-log decoder's status format changed in 4.4).
"""

from __future__ import annotations

import pytest

import eoslab.cluster
from eoslab import _image, cli
from eoslab.topology import KAFKA_IMAGE, KAFKA_VERSION


def _one_sentence(err: str) -> str:
    assert err.startswith("eoslab: ") and err.endswith("\n"), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_setup_with_a_kafka_home_of_another_release(tmp_path, monkeypatch, capsys):
    libs = tmp_path / "libs"
    libs.mkdir()
    for name in ("kafka_2.13-4.1.2.jar", "kafka-clients-4.1.2.jar"):
        (libs / name).write_bytes(b"")
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path))
    monkeypatch.setenv("EOSLAB_BACKEND", "local")
    assert cli.main(["setup"]) != 0
    err = _one_sentence(capsys.readouterr().err)
    assert f"KAFKA_HOME={tmp_path} is Kafka 4.1.2, but this kit is built for Kafka {KAFKA_VERSION}" in err


@pytest.mark.parametrize(
    ("name", "release"),
    [
        ("apache/kafka:4.1.2", "4.1.2"),
        ("eoslab/kafka:4.3.1", "4.3.1"),
        ("mirror.example:5000/apache/kafka:4.2.0@sha256:" + "0" * 64, "4.2.0"),
        (KAFKA_IMAGE, KAFKA_VERSION),
        (f"apache/kafka:{KAFKA_VERSION}-rc1", KAFKA_VERSION),
        ("apache/kafka:latest", None),
        ("apache/kafka", None),
        ("localhost:5000/kafka", None),
        ("eoslab/kafka:missing-1a2b3c", None),
    ],
)
def test_the_release_an_image_tag_names(name, release):
    assert _image.image_release(name) == release


def test_an_image_of_another_release_is_refused_before_docker_runs_it(monkeypatch, capsys):
    monkeypatch.setattr(eoslab.cluster, "docker_available", lambda: None)
    monkeypatch.setattr(_image, "image_exists", lambda name: pytest.fail(f"docker asked about {name}"))
    monkeypatch.setenv(_image.IMAGE_ENV, "apache/kafka:4.1.2")
    assert cli.main(["image", "ensure"]) != 0
    err = _one_sentence(capsys.readouterr().err)
    assert err == (
        f"eoslab: The Kafka image apache/kafka:4.1.2 is Kafka 4.1.2, but this kit is built for Kafka {KAFKA_VERSION}: "
        f"set EOSLAB_KAFKA_IMAGE={KAFKA_IMAGE} (or eoslab/kafka:{KAFKA_VERSION}, `eoslab image build`), or unset it."
    )
    monkeypatch.setenv(_image.IMAGE_ENV, "eoslab/kafka:custom")  # no version in the tag: taken at its word
    assert _image.kafka_image() == "eoslab/kafka:custom"
