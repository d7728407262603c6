"""`python -m tools.kitbench cluster --compare`: the two start paths, their order, and the summary (no cluster
needed)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from eoslab import _cds
from eoslab.bench._harness import BenchError
from eoslab.cluster import StartMarks
from eoslab.topology import TOPOLOGY, role_jvm_flags
from tools.kitbench.cluster import bench_cluster
from tools.kitbench.startup import CDS_ENV, PATHS, ColdStart, round_order, start_path, summary


class _Cluster:
    topology = TOPOLOGY


def test_start_path_sets_and_restores_the_variable(monkeypatch) -> None:
    monkeypatch.delenv(CDS_ENV, raising=False)
    with start_path(PATHS[0]):
        assert os.environ[CDS_ENV] == "0"
        assert _cds.ensure_archive("any classpath") is None  # the variable the archive's own code reads
    assert CDS_ENV not in os.environ
    monkeypatch.setenv(CDS_ENV, "0")
    with start_path(PATHS[1]):
        assert CDS_ENV not in os.environ
    with start_path(None):  # a start without --compare keeps the caller's setting
        assert os.environ[CDS_ENV] == "0"
    assert os.environ[CDS_ENV] == "0"


def test_compare_needs_the_local_backend() -> None:
    docker = SimpleNamespace(backend=SimpleNamespace(name="docker"))
    with pytest.raises(BenchError, match="local backend"):
        bench_cluster(docker, compare=True)  # type: ignore[arg-type]


def test_rounds_alternate_who_goes_first() -> None:
    assert [round_order(i)[0] for i in range(4)] == [PATHS[0], PATHS[1], PATHS[0], PATHS[1]]
    assert sorted(round_order(1)) == sorted(PATHS)


def _run(total: float, ctrl: float) -> ColdStart:
    cs = ColdStart(False, StartMarks(t0=0.0, marks={"proxy": total, "quorum": total / 2}))
    cs.cpu = {"controller-1": ctrl, "broker-1": 4.0}
    cs.load = (1.0, 1.0)
    return cs


def test_summary_gives_median_and_range_per_path() -> None:
    without, with_ = PATHS
    runs = {without: [_run(30, 10), _run(20, 9), _run(25, 11)], with_: [_run(12, 5), _run(14, 6), _run(13, 4)]}
    lines = summary(runs, _Cluster())  # type: ignore[arg-type]
    row = next(line for line in lines if "cold start to ready" in line)
    assert "25.0 (20.0-30.0)" in row and "13.0 (12.0-14.0)" in row
    row = next(line for line in lines if "3 controllers" in line)
    assert "10.0 (9.0-11.0)" in row and "5.0 (4.0-6.0)" in row
    assert "over 3 runs" in lines[0]


def test_make_test_brokers_stop_at_c1_and_a_learners_do_not(monkeypatch):
    from eoslab.topology import BROKER_JIT_ENV, local_broker_extra_flags

    monkeypatch.delenv(BROKER_JIT_ENV, raising=False)
    assert local_broker_extra_flags("broker") == ()
    monkeypatch.setenv(BROKER_JIT_ENV, "c1")
    assert local_broker_extra_flags("broker") == ("-XX:TieredStopAtLevel=1",)
    assert local_broker_extra_flags("controller") == ()  # already C1 in CONTROLLER_FLAGS
    assert "TieredStopAtLevel" not in role_jvm_flags("broker")  # the compose file stays a learner's


def test_controllers_start_on_c1_and_the_serial_gc_and_brokers_keep_g1() -> None:
    assert "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" in role_jvm_flags("controller")
    assert "-XX:+UseG1GC" in role_jvm_flags("broker") and "UseSerialGC" not in role_jvm_flags("broker")
