"""Reading a node's start from its log: the kit's marker line, then Kafka's own lines (no cluster needed)."""
# ruff: noqa: E501  (Kafka log lines quoted as they are)

from __future__ import annotations

from datetime import datetime

from eoslab.cluster import PHASES, StartMarks, node_start
from eoslab.cluster._startup import marker_line


def _ts(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S.%f").timestamp()


OLD_START = """
===== eoslab: starting broker-1 at 2026-11-26 06:00:00 =====
[06:00:04,000] INFO  Registered `kafka:type=kafka.Log4jController` MBean (Log4jControllerRegistration$)
[06:00:09,000] INFO  [KafkaRaftServer nodeId=1] Kafka Server started (KafkaRaftServer)
"""

BROKER = """
===== eoslab: starting broker-1 at 2026-11-26 23:59:58.250 =====
[23:59:59,100] INFO  Registered `kafka:type=kafka.Log4jController` MBean (Log4jControllerRegistration$)
[00:00:03,000] INFO  [BrokerLifecycleManager id=1] Successfully registered broker 1 with broker epoch 8 (BrokerLifecycleManager)
java.io.IOException: a stack trace line has no time
[00:00:04,500] INFO  [BrokerLifecycleManager id=1] The broker has been unfenced. Transitioning from RECOVERY to RUNNING. (BrokerLifecycleManager)
[00:00:04,700] INFO  [KafkaRaftServer nodeId=1] Kafka Server started (KafkaRaftServer)
[00:00:09,000] INFO  [KafkaRaftServer nodeId=1] Kafka Server started (KafkaRaftServer)
"""


def test_the_last_start_counts_and_midnight_is_crossed() -> None:
    start = node_start("broker-1", OLD_START + BROKER)
    assert start.spawned == _ts("2026-11-26 23:59:58.250000")
    assert start.at("first_log") == _ts("2026-11-26 23:59:59.100000")
    assert start.at("registered") == _ts("2026-11-27 00:00:03.000000")
    assert start.at("unfenced") == _ts("2026-11-27 00:00:04.500000")
    assert start.at("started") == _ts("2026-11-27 00:00:04.700000")  # the first such line, not a later one
    assert start.at("active") is None


def test_controller_milestones() -> None:
    text = """
===== eoslab: starting controller-1 at 2026-11-26 07:00:00.000 =====
[07:00:03,000] INFO  [QuorumController id=101] In the new epoch 1, the leader is (none). (QuorumController)
[07:00:04,000] INFO  [QuorumController id=101] In the new epoch 1, the leader is 101. (QuorumController)
[07:00:05,000] INFO  [QuorumController id=101] Becoming the active controller at epoch 1, next write offset 1. (QuorumController)
"""
    start = node_start("controller-1", text)
    assert start.at("leader_known") == _ts("2026-11-26 07:00:04.000000")  # "(none)" is not a leader
    assert start.at("active") == _ts("2026-11-26 07:00:05.000000")


def test_a_log_without_a_marker_says_nothing() -> None:
    start = node_start("broker-2", "[07:00:03,000] INFO  Kafka Server started\n")
    assert start.spawned is None and start.events == {}


def test_marker_round_trips() -> None:
    when = _ts("2026-11-26 07:00:00.123000")
    start = node_start("broker-3", "\n" + marker_line("broker-3", when) + "\n")
    assert start.spawned is not None and abs(start.spawned - when) < 0.001


def test_marks_are_relative_to_t0() -> None:
    marks = StartMarks(t0=100.0)
    marks.marks["quorum"] = 103.5
    assert marks.since_t0("quorum") == 3.5
    assert marks.since_t0("brokers") is None
    assert "quorum" in PHASES and "seed" in PHASES


def test_a_phase_keeps_its_first_mark() -> None:
    marks = StartMarks(t0=0.0)
    marks("quorum")
    first = marks.marks["quorum"]
    marks("quorum")  # a later wait that passes the same step again does not move it
    assert marks.marks["quorum"] == first
