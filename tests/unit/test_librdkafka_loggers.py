"""librdkafka's log lines from the kit's clients never land under a notebook cell as red text (the site test's
output check reads the executed notebooks for it): the lessons' lines are kept, the benchmarks' errors printed."""

from __future__ import annotations

import logging
import time

import pytest
from confluent_kafka import Producer

from eoslab._librdkafka import BENCH, KEPT, LESSONS
from eoslab._ports import free_port


def test_a_lessons_clients_warning_is_kept_and_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    LESSONS.getChild("a-lesson").warning("GETPID [rdkafka#producer-2] Coordinator load in progress")
    assert KEPT.lines[-1] == "WARNING GETPID [rdkafka#producer-2] Coordinator load in progress"
    assert capfd.readouterr().err == ""


def test_a_real_clients_failed_connections_are_kept_not_printed(capfd: pytest.CaptureFixture[str]) -> None:
    before = len(KEPT.lines)
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{free_port()}", "logger": LESSONS})
    deadline = time.monotonic() + 10
    while len(KEPT.lines) == before and time.monotonic() < deadline:
        producer.poll(0.1)  # serves the log callback: librdkafka's "Connection refused" at ERROR
    assert any("Connection refused" in line for line in list(KEPT.lines)[before:])
    assert capfd.readouterr().err == ""


def test_a_benchmarks_error_is_printed(capfd: pytest.CaptureFixture[str]) -> None:
    BENCH.error("all brokers down")
    BENCH.warning("Coordinator load in progress: retrying")
    assert capfd.readouterr().err == "all brokers down\n"
    assert logging.getLogger("eoslab.librdkafka.kit").getEffectiveLevel() == logging.CRITICAL
