"""The producer benchmark on the real cluster: a run folder with every table, the Java peer on the same
settings, what both clients really send (the proxy's trace). Lab 06 on these runs: test_lab06.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from eoslab.bench._harness import SLICE_CAP
from eoslab.cluster import Cluster
from eoslab.runs import CPU_KINDS, FORMAT, MIN_COMMITS, Workload, cpu_table, matrix, run_folders
from eoslab.topology import KAFKA_VERSION

pytestmark = pytest.mark.cluster


def test_a_run_records_every_table(bench_runs: Path) -> None:
    (folder,) = run_folders(bench_runs)[:1]  # the bench runs only: the fault matrix writes its run beside them
    summary = pd.read_parquet(folder / "summary.parquet")
    samples = pd.read_parquet(folder / "samples.parquet")
    env = pd.read_parquet(folder / "env.parquet").iloc[0]
    params = pd.read_parquet(folder / "params.parquet")
    assert set(params.label) == set(summary.label)
    sat = summary[summary.phase == "saturation"]
    assert (sat.records_per_s > 0).all() and (sat.errors == 0).all()
    # Rounds: every mode once per round, in an order rotated from round to round.
    rounds = sat[sat["round"] >= 0]
    assert env.format == FORMAT and set(rounds["round"]) == set(range(env.rounds))
    assert (rounds.groupby("round").label.nunique() == len(params)).all()
    firsts = rounds[rounds.position == 0].sort_values("round").label.tolist()
    assert len(set(firsts)) == len(firsts), firsts
    # A transactional slice is planned for the matrix's floor of commits and runs on until it has them, up to
    # SLICE_CAP times its length (a commit first drains the client's buffer: on a loaded machine a transaction
    # lasts longer than its interval, and the report counts the commits each slice really made).
    txn = rounds[rounds["mode"] == "transactional"].merge(params[["label", "slice_s", "commit_ms"]], on="label")
    assert (txn.slice_s >= MIN_COMMITS * txn.commit_ms_y / 1000).all()
    short = txn[txn.commits < MIN_COMMITS]
    assert (txn.commits > 0).all() and (short.seconds >= SLICE_CAP * short.slice_s).all(), short
    # Every record of the fixed-load phase was acked once and read once per isolation level.
    counts = samples.groupby(["label", "kind"]).seq.nunique().unstack("kind")
    offered = params.set_index("label").eval("rate * duration_s").astype(int)
    for kind in ("ack", "e2e_read_committed", "e2e_read_uncommitted"):
        assert (counts[kind] == offered[counts.index]).all(), kind
    assert env.kafka_version == KAFKA_VERSION and env.cores >= 1 and env.librdkafka_version
    # The brokers' warm-up ran before the rounds (not recorded as one) and stopped at its cap or on idle compilers,
    # whose threads the local backend sees in /proc.
    assert env.warmup_rounds >= 1 and env.warmup_reason in ("jit idle", "cap", "rate plateau")
    assert env.warmup_beyond_first_s <= matrix(env.matrix).warmup_max_s
    if env.backend == "local":
        assert env.warmup_reason != "rate plateau" and env.warmup_jit_first >= 0


def test_a_run_records_each_process_kinds_cpu(bench_runs: Path) -> None:
    """Issue 26: per mode, the CPU per record of this process, the 3 brokers and the 3 controllers, each over
    the mode's measured slices (one window per round), read from the kernel's counters of the real pids."""
    (folder,) = run_folders(bench_runs)[:1]
    summary = pd.read_parquet(folder / "summary.parquet")
    params = pd.read_parquet(folder / "params.parquet")
    env = pd.read_parquet(folder / "env.parquet").iloc[0]
    table = cpu_table(summary)
    print(table.to_string())
    ours = table[table.client == "eoslab"]
    assert sorted(zip(ours.label, ours.kind, strict=True)) == sorted((m, k) for m in params.label for k in CPU_KINDS)
    assert (ours.windows == env.rounds).all() and (ours.us_per_record > 0).all(), ours
    # The same windows as the throughput: every round's saturation row carries all three kinds.
    rounds = summary[(summary.phase == "saturation") & (summary["round"] >= 0)]
    assert rounds[["cpu_client_s", "cpu_brokers_s", "cpu_controllers_s"]].notna().all().all()
    assert (rounds.cpu_s == rounds.cpu_client_s).all()


def test_read_committed_waits_for_the_commit(bench_runs: Path) -> None:
    """At a fixed load, read_committed's median e2e latency is at least read_uncommitted's for transactions."""
    samples = pd.concat(pd.read_parquet(p / "samples.parquet") for p in run_folders(bench_runs))
    txn = samples[samples.label.str.startswith("txn_")]
    p50 = txn.groupby("kind").latency_ms.median()
    assert p50["e2e_read_committed"] >= p50["e2e_read_uncommitted"] * 0.9


def test_the_java_peer_runs_with_the_same_settings(cluster: Cluster, topic_name: str) -> None:
    """The tool runs a transactional workload on the harness's bytes and reports its rate after its warm-up;
    its CPU per process kind is read over that same window, which leaves out the JVM's start-up."""
    from eoslab.bench._cpu import CpuMeter
    from eoslab.bench._peer import run_peer

    w = Workload("transactional", commit_ms=100)
    cluster.admin.create_topic(topic_name, partitions=3)
    try:
        r = run_peer(cluster, w, topic_name, 20_000, meter=CpuMeter.of(cluster, None))
    finally:
        cluster.admin.delete_topic(topic_name)
    assert r is not None and r.total_records == 20_000 and r.payload == "constant"
    # Counted after its first 5 s report, when it lasted that long; its own total includes the warm-up.
    assert r.records <= r.total_records and (r.records == 0 or r.seconds > 0)
    assert r.total_records_per_s > 0
    if r.records:  # a window (maybe short: no floor on each kind): every kind measured, the JVM's less than its life's
        assert set(r.cpu) == set(CPU_KINDS) and all(v >= 0 for v in r.cpu.values()), r.cpu
        assert r.cpu["client"] < r.cpu_s, (r.cpu, r.cpu_s)
    else:  # shorter than the tool's first report: no window, no figure
        assert r.cpu == {}


@pytest.mark.parametrize("label", ["acks_all", "idempotent"])
def test_both_clients_send_the_same_batches(cluster: Cluster, label: str) -> None:
    """Like for like on the wire: through the proxy both clients fill batch.size (the same records per batch).
    librdkafka's idempotent producer sends another request on a partition only while fewer than 5 RECORDS are
    unanswered (rdkafka_broker.c counts messages against the limit of 5 requests); the Java client, with the
    same max.in.flight, is not held back that way."""
    from eoslab.runs import matrix
    from tools.kitbench.wire import measure_wire

    (w,) = [x for x in matrix("default").workloads if x.label == label]
    harness, java = measure_wire(cluster, w, seconds=2.0, java_records=20_000)
    print(harness.line(), java.line(), sep="\n")
    full = w.batch_size // (w.record_size + 16)  # a batch filled to batch.size: ~16 bytes of framing per record
    assert harness.records_per_batch == java.records_per_batch >= full, (harness, java)
    if w.idempotent:
        assert harness.records_in_flight_at_send < 5, harness
