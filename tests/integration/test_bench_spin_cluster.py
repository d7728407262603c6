"""Issue 26 on the real cluster: the spin probe's figures in the course layout (about 15 s), and librdkafka's
own rdkafka_performance over its measured window when it is already built (its one-time build is a minute)."""

from __future__ import annotations

import pytest

from eoslab.bench import _cbuild
from eoslab.bench._cpu import CpuMeter
from eoslab.cluster import Cluster
from eoslab.runs import CPU_KINDS, Workload
from tools.kitbench.spin import VARIANTS, run_spin

pytestmark = pytest.mark.cluster


def test_the_idempotent_producers_broker_threads_wake_far_more_per_record(cluster: Cluster) -> None:
    """One short window per mode: every figure present, and the idempotent producer's broker threads wake up
    at least 10 times as often per record as acks=all's (measured: thousands of times as often, because the
    thread polls with a 0 ms timeout while the idempotence cap forbids sending; docs/benchmarks-producers.md)."""
    rows = run_spin(cluster, VARIANTS[:1], rounds=1, seconds=1.5, warm_s=0.5, say=lambda s: None)
    by_mode = {r["mode"]: r for r in rows}
    assert set(by_mode) == {"acks_all", "idempotent"}
    for r in rows:
        assert r["records"] > 0 and r["records_per_s"] > 0, r
        assert r["broker_threads_us"] > 0 and r["app_us"] > 0 and r["brokers_us"] > 0, r
        assert r["wakeups_per_record"] > 0 and r["batch_msgs"] > 0, r
    print({m: round(r["wakeups_per_record"], 3) for m, r in by_mode.items()})
    assert by_mode["idempotent"]["wakeups_per_record"] >= 10 * by_mode["acks_all"]["wakeups_per_record"], by_mode


def test_rdkafka_performance_is_measured_after_its_warm_up(cluster: Cluster, topic_name: str) -> None:
    from eoslab.bench._cpeer import run_cpeer

    if not _cbuild.binary_path().is_file():
        pytest.skip("rdkafka_performance is not built yet (eoslab bench producers --c-peer builds it once)")
    program = _cbuild.binary_path()
    cluster.admin.create_topic(topic_name, partitions=3)
    try:
        r = run_cpeer(
            program,
            _cbuild.version(program),
            Workload("acks_all"),
            topic_name,
            cluster.bootstrap_servers(),
            2.0,
            CpuMeter.of(cluster, None),
        )
    finally:
        cluster.admin.delete_topic(topic_name)
    assert r.version.startswith("2.") and r.records > 0 and 2.0 <= r.seconds < 4.0, r
    assert set(r.cpu) == set(CPU_KINDS) and all(v >= 0 for v in r.cpu.values()), r.cpu
    assert r.threads["broker_threads"] > 0 and r.stats is not None and r.stats.txmsgs > 0, r
    assert r.stats.documents >= 3, r.stats  # statistics every 500 ms: 2 s of window hold 3 or 4, never 1
