"""`python -m tools.kitbench cluster --compare`: the two start paths, their order, and the summary (no cluster
needed)."""

from __future__ import annotations

import os

from eoslab.cluster import StartMarks
from eoslab.topology import COLD_START_ENV, TOPOLOGY, cold_start_before, role_jvm_flags
from tools.kitbench.startup import ColdStart, round_order, start_path, summary


class _Cluster:
    topology = TOPOLOGY


def test_start_path_sets_and_restores_the_variable(monkeypatch) -> None:
    monkeypatch.delenv(COLD_START_ENV, raising=False)
    after = role_jvm_flags("controller")
    with start_path("before"):
        assert cold_start_before()
        before = role_jvm_flags("controller")
    assert COLD_START_ENV not in os.environ and not cold_start_before()
    assert "-XX:+UseSerialGC" in after and "-XX:+UseG1GC" in before  # the controllers' flags are what differs
    assert role_jvm_flags("broker") == role_jvm_flags("broker")
    monkeypatch.setenv(COLD_START_ENV, "before")
    with start_path("after"):
        assert not cold_start_before()
    assert os.environ[COLD_START_ENV] == "before"


def test_rounds_alternate_who_goes_first() -> None:
    assert [round_order(i)[0] for i in range(4)] == ["before", "after", "before", "after"]
    assert sorted(round_order(1)) == ["after", "before"]


def _run(total: float, ctrl: float) -> ColdStart:
    cs = ColdStart(False, StartMarks(t0=0.0, marks={"proxy": total, "quorum": total / 2}))
    cs.cpu = {"controller-1": ctrl, "broker-1": 4.0}
    cs.load = (1.0, 1.0)
    return cs


def test_summary_gives_median_and_range_per_path() -> None:
    runs = {"before": [_run(30, 10), _run(20, 9), _run(25, 11)], "after": [_run(12, 5), _run(14, 6), _run(13, 4)]}
    lines = summary(runs, _Cluster())  # type: ignore[arg-type]
    row = next(line for line in lines if "cold start to ready" in line)
    assert "25.0 (20.0-30.0)" in row and "13.0 (12.0-14.0)" in row
    row = next(line for line in lines if "3 controllers" in line)
    assert "10.0 (9.0-11.0)" in row and "5.0 (4.0-6.0)" in row
    assert "over 3 runs" in lines[0]


def test_make_test_brokers_stop_at_c1_and_a_learners_do_not(monkeypatch):
    from eoslab.topology import BROKER_JIT_ENV, local_broker_extra_flags

    monkeypatch.delenv(COLD_START_ENV, raising=False)
    monkeypatch.delenv(BROKER_JIT_ENV, raising=False)
    assert local_broker_extra_flags("broker") == ()
    monkeypatch.setenv(BROKER_JIT_ENV, "c1")
    assert local_broker_extra_flags("broker") == ("-XX:TieredStopAtLevel=1",)
    assert local_broker_extra_flags("controller") == ()  # already C1 in CONTROLLER_FLAGS
    assert "TieredStopAtLevel" not in role_jvm_flags("broker")  # the compose file stays a learner's
    monkeypatch.setenv(COLD_START_ENV, "before")
    assert local_broker_extra_flags("broker") == ()
