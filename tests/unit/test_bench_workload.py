"""Workloads as data: both clients get the same explicit settings; rounds and slices; the Java tool's
report lines parse into its rate after its warm-up report."""

from __future__ import annotations

from typing import Any

import pytest

from eoslab.bench._peer import java_args, parse_output, peer_records
from eoslab.bench._rounds import rotated
from eoslab.runs import JAVA_WARMUP_S, MATRICES, MIN_COMMITS, Matrix, Workload, WorkloadError, matrix


def test_every_batching_setting_is_explicit_on_both_sides():
    w = Workload("idempotent", linger_ms=7, batch_size=32768, buffer_kb=1024)
    rd = w.librdkafka_conf()
    java = dict(p.split("=", 1) for p in w.java_props())
    for key in ("acks", "enable.idempotence", "linger.ms", "batch.size", "max.in.flight.requests.per.connection"):
        assert key in rd and key in java
    assert java["enable.idempotence"] == "true" and java["linger.ms"] == "7" and java["batch.size"] == "32768"
    # The client's buffer, the same on both sides: a commit flushes it, so it shapes a transaction.
    assert rd["queue.buffering.max.kbytes"] == 1024 and java["buffer.memory"] == str(1024 * 1024)
    with pytest.raises(WorkloadError, match="fewer than 4 batches"):
        Workload("acks_all", batch_size=65536, buffer_kb=128)


def test_modes():
    assert Workload("acks1").librdkafka_conf()["acks"] == "1"
    assert Workload("acks_all").librdkafka_conf()["enable.idempotence"] is False
    t = Workload("transactional", commit_ms=100)
    assert t.label == "txn_100ms" and t.idempotent
    args = java_args(t, "x", 5000)
    assert args[args.index("--transaction-duration-ms") + 1] == "100" and "--transactional-id" in args
    assert args[args.index("--num-records") + 1] == "5000" and "--record-size" in args
    with pytest.raises(WorkloadError, match="commit"):
        Workload("transactional")
    with pytest.raises(WorkloadError, match="Unknown producer mode"):
        Workload("exactly-twice")


def test_the_peer_sends_the_harness_record_from_a_file(tmp_path):
    args = java_args(Workload("acks_all"), "x", 10, tmp_path / "record.txt")
    assert args[args.index("--payload-file") + 1] == str(tmp_path / "record.txt") and "--record-size" not in args


def test_slices_hold_enough_commits():
    m = matrix("default")
    by = {w.label: m.slice_s(w) for w in m.workloads}
    assert by["acks_all"] == m.seconds and by["txn_500ms"] == MIN_COMMITS * 0.5  # 20 commits at 500 ms: 10 s
    assert m.round_s == pytest.approx(sum(by.values()))
    assert [w.label for w in m.peer_workloads()] == ["acks_all", "idempotent", "txn_100ms"]
    assert [w.label for w in matrix("default", java_peer="baseline").peer_workloads()] == ["acks_all"]
    assert matrix("quick").peer_workloads() == []
    assert len(matrix("default", java_peer="all").peer_workloads()) == len(m.workloads)


def test_matrices():
    assert {w.label for w in MATRICES["default"].workloads} >= {"acks1", "acks_all", "idempotent", "txn_100ms"}
    assert all(w.rate == 7 for w in matrix("quick", rate=7).workloads)
    long = matrix("default", rounds=15, seconds=10.0)
    assert long.rounds == 15 and long.seconds == 10.0 and long.workloads == MATRICES["default"].workloads
    with pytest.raises(WorkloadError):
        matrix("huge")
    with pytest.raises(WorkloadError, match="no acks_all"):
        Matrix("x", (Workload("idempotent"),))
    with pytest.raises(WorkloadError, match="java_peer"):
        matrix("quick", java_peer="some")


def test_rounds_rotate_the_order():
    order = ["a", "b", "c"]
    assert [rotated(order, r) for r in range(4)] == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], order]


TOOL_OUTPUT = (
    "21500 records sent, 4300.0 records/sec (4.20 MB/sec), 800.1 ms avg latency, 1500.0 ms max latency.\n"
    "100000 records sent, 20000.0 records/sec (19.53 MB/sec), 80.1 ms avg latency, 300.0 ms max latency.\n"
    "150000 records sent, 10000.0 records/sec (9.77 MB/sec), 52.47 ms avg latency, 1500.00 ms max latency, "
    "31 ms 50th, 201 ms 95th, 410 ms 99th, 580 ms 99.9th.\n"
)


def test_the_peer_figure_leaves_out_the_tools_first_report():
    r = parse_output(TOOL_OUTPUT)
    assert r is not None and r.total_records == 150_000 and r.total_records_per_s == pytest.approx(10_000)
    # 15 s in all; the first report held 21,500 records in 5 s: the rest is 128,500 records in 10 s.
    assert r.records == 128_500 and r.seconds == pytest.approx(10.0) and r.records_per_s == pytest.approx(12_850)
    assert r.windows == [4300.0, 20000.0] and r.p50_ms == 31 and r.p99_ms == 410
    assert parse_output("nothing") is None
    short = parse_output(TOOL_OUTPUT.splitlines()[-1])
    assert short is not None and short.records == 0  # shorter than one report: no steady stretch


def test_a_peer_still_warming_up_is_flagged():
    lines = "".join(
        f"{n} records sent, {rps:.1f} records/sec (1.0 MB/sec), 1.0 ms avg latency, 2.0 ms max latency.\n"
        for n, rps in ((5000, 1000.0), (50000, 10000.0), (75000, 15000.0))
    )
    total = (
        "130000 records sent, 8666.7 records/sec (8.46 MB/sec), 1 ms avg latency, 2 ms max latency, "
        "1 ms 50th, 1 ms 95th, 1 ms 99th, 1 ms 99.9th.\n"
    )
    r = parse_output(lines + total)
    assert r is not None and r.still_warming
    assert peer_records(Workload("acks_all"), 10_000, 10.0) == int(10_000 * (JAVA_WARMUP_S + 10) * 1.2)


RUN_6914_JAVA = {"acks_all": 73_444.0, "idempotent": 68_800.0, "txn_100ms": 51_459.0}
"""Run 20261128T084228-6914 (/tmp/c26bench2.log): the Java tool's rate per mode after its warm-up (txn_100ms: its
own total, the only rate it printed)."""
RUN_6914_HARNESS = {"acks_all": 56_530.0, "idempotent": 34_471.0, "txn_100ms": 19_036.0}
"""The same run: the harness's median records/s over rounds, which sized the tool's records."""


def _tool(cluster: Any, w: Workload, topic: str, records: int, meter: Any = None) -> Any:
    """Kafka's tool at its rate of run 6914: a report line every full 5 s, then its summary."""
    rate = RUN_6914_JAVA[w.label]
    reports = int(records / rate // JAVA_WARMUP_S)
    window = f"{int(rate * JAVA_WARMUP_S)} records sent, {rate:.1f} records/sec (67.0 MB/sec), 9.0 ms avg latency, "
    total = (
        f"{records} records sent, {rate:.1f} records/sec (50.25 MB/sec), 9.00 ms avg latency, 90.00 ms max latency, "
        "8 ms 50th, 20 ms 95th, 40 ms 99th, 80 ms 99.9th.\n"
    )
    return parse_output((window + "90.0 ms max latency.\n") * reports + total)


def test_every_peer_has_a_measured_window_where_the_harness_is_the_bottleneck(monkeypatch):
    """Run 6914 printed `txn_100ms eoslab 19036 java nan (51459) ratio nan`: the tool's records were sized by the
    harness's rate alone (19,036/s × 11 s × 1.2 = 251,276), the tool ran 2.7× faster and ended in 4.9 s, before
    its first 5 s report: no measured window (and idempotent's held 1.6 s). Sized also by the fastest rate the tool
    has shown in the run, every mode runs past its warm-up for at least a third of its --java-seconds."""
    import types

    from tqdm import tqdm

    from eoslab.bench import producers

    m = matrix("default")
    assert [w.label for w in m.peer_workloads()] == list(RUN_6914_JAVA)
    monkeypatch.setattr(producers, "run_peer", _tool)
    monkeypatch.setattr(producers, "CpuMeter", types.SimpleNamespace(of=lambda cluster, pid: None))
    admin = types.SimpleNamespace(create_topic=lambda *a, **k: None, delete_topic=lambda *a: None)
    cluster: Any = types.SimpleNamespace(admin=admin)  # a Cluster, as the peers' loop sees it
    summary: list[dict[str, Any]] = [{"label": k, "records_per_s": v} for k, v in RUN_6914_HARNESS.items()]
    index = {w.label: i for i, w in enumerate(m.workloads)}
    producers._measure_peers(cluster, m, "r", index, summary, tqdm(disable=True))
    java = {r["label"]: r for r in summary if r.get("client") == "java"}
    assert list(java) == list(RUN_6914_JAVA)
    for label, r in java.items():
        assert r["records_per_s"] == pytest.approx(RUN_6914_JAVA[label]), label
        assert r["seconds"] >= m.java_seconds / 3, label  # past its warm-up report by 2 s at least
    # what it costs in these figures: the tool's time, against the plan of warm-up + --java-seconds per mode
    tool_s = sum(r["java_total_records"] / RUN_6914_JAVA[k] for k, r in java.items())
    assert tool_s <= len(java) * (JAVA_WARMUP_S + m.java_seconds)


def _produce_row(t0: float, t1: float | None, partition: int, records: int) -> dict:
    items = [{"topic": "t", "partition": partition, "record_count": records}]
    return {"api": "Produce", "time": t0, "response_time": t1, "request": {"items": items}}


def test_wire_stats_count_what_a_partition_had_unanswered():
    from tools.kitbench.wire import wire_stats

    rows = [
        _produce_row(0.0, 1.0, 0, 63),
        _produce_row(1.0, 2.0, 0, 63),  # sent as the first was answered: not in flight together
        _produce_row(2.0, 4.0, 0, 2),
        _produce_row(3.0, 4.0, 0, 63),  # sent behind a batch of 2 records (librdkafka allows it: 2 < 5)
        _produce_row(0.0, 4.0, 1, 10),
        _produce_row(0.5, None, 1, 10),  # not answered yet: a batch, not an interval
        {"api": "Metadata", "time": 0.0, "response_time": 0.1},
    ]
    s = wire_stats(rows, "eoslab", "idempotent")
    assert (s.requests, s.batches, s.records_per_batch) == (6, 6, 36.5)
    assert s.max_in_flight == 2 and s.records_in_flight_at_send == 2
    assert s.mean_in_flight == round((5 / 4 + 4 / 4) / 2, 2)


def test_the_default_run_is_planned_within_its_target():
    """The learner's run: its measuring time as planned, plus what is left for Spark's report, within 3 min."""
    from eoslab.bench.producers import estimate_s
    from eoslab.bench.targets import DEFAULT_RUN_S, REPORT_S

    assert estimate_s(matrix("default")) + REPORT_S <= DEFAULT_RUN_S


def test_a_run_the_disk_cannot_hold_is_refused_in_one_sentence(tmp_path, monkeypatch):
    """The long run once filled 48 GB in 5 minutes: trimmed segments left only at the default 5-min retention
    check. Now they leave within ~11 s, and a run needing more free disk than there is never starts."""
    import collections
    import shutil
    import types

    from eoslab.bench import producers
    from eoslab.bench._harness import BenchError
    from eoslab.topology import BROKER_PROPERTIES

    assert BROKER_PROPERTIES["log.retention.check.interval.ms"] == "10000"
    default, long_run = matrix("default"), matrix("default", rounds=15, seconds=10, java_peer="all", java_seconds=30)
    assert 3e9 < producers.disk_needed(default) < producers.disk_needed(long_run) < 25e9
    monkeypatch.setenv("EOSLAB_DATA", str(tmp_path / "kafka-data"))
    local: Any = types.SimpleNamespace(backend=types.SimpleNamespace(name="local"))  # a Cluster, as check_disk sees it
    docker: Any = types.SimpleNamespace(backend=types.SimpleNamespace(name="docker"))
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(100e9, 99e9, 1e9))
    with pytest.raises(BenchError, match=r"^Only 1.0 GB are free on the disk holding .*kafka-data, .*--seconds"):
        producers.check_disk(local, default)
    producers.check_disk(docker, default)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(100e9, 50e9, 50e9))
    producers.check_disk(local, long_run)
