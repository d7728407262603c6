"""Workloads as data: both clients get the same explicit settings; the Java tool's summary parses."""

from __future__ import annotations

import pytest

from eoslab.bench._peer import java_args, parse_total
from eoslab.runs import MATRICES, Workload, WorkloadError, matrix


def test_every_batching_setting_is_explicit_on_both_sides():
    w = Workload("idempotent", linger_ms=7, batch_size=32768)
    rd = w.librdkafka_conf()
    java = dict(p.split("=", 1) for p in w.java_props())
    for key in ("acks", "enable.idempotence", "linger.ms", "batch.size", "max.in.flight.requests.per.connection"):
        assert key in rd and key in java
    assert java["enable.idempotence"] == "true" and java["linger.ms"] == "7" and java["batch.size"] == "32768"


def test_modes():
    assert Workload("acks1").librdkafka_conf()["acks"] == "1"
    assert Workload("acks_all").librdkafka_conf()["enable.idempotence"] is False
    t = Workload("transactional", commit_ms=100)
    assert t.label == "txn_100ms" and t.idempotent
    args = java_args(t, "x")
    assert args[args.index("--transaction-duration-ms") + 1] == "100" and "--transactional-id" in args
    with pytest.raises(WorkloadError, match="commit"):
        Workload("transactional")
    with pytest.raises(WorkloadError, match="Unknown producer mode"):
        Workload("exactly-twice")


def test_matrices():
    assert {w.label for w in MATRICES["default"].workloads} >= {"acks1", "acks_all", "idempotent", "txn_100ms"}
    assert all(w.count == 7 for w in matrix("quick", count=7).workloads)
    with pytest.raises(WorkloadError):
        matrix("huge")


def test_parse_the_java_summary():
    out = (
        "50000 records sent, 9990.0 records/sec (9.76 MB/sec), 80.1 ms avg latency, 500.0 ms max latency.\n"
        "120000 records sent, 31612.3 records/sec (30.87 MB/sec), 52.47 ms avg latency, 611.00 ms max latency, "
        "31 ms 50th, 201 ms 95th, 410 ms 99th, 580 ms 99.9th.\n"
    )
    r = parse_total(out)
    assert r is not None and r.records == 120000 and r.records_per_s == pytest.approx(31612.3)
    assert r.p50_ms == 31 and r.p99_ms == 410
    assert parse_total("nothing") is None
