"""Module 06's analysis on GENERATED runs (a known model, no cluster): it must recover the model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eoslab import analysis as A
from eoslab.analysis._synthetic import ACK_MEDIAN_MS, TRUE_OVERHEAD
from eoslab.grading import CheckFailed, lab06


@pytest.fixture(scope="module")
def spark():
    s = A.spark_session(kafka=False)
    yield s


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    A.generate_class(root, learners=3, runs_each=2)
    return root


@pytest.fixture(scope="module")
def runs(spark, klass):
    return A.load_runs(spark, klass)


def test_learners_come_from_the_folders_not_the_login(runs):
    learners = {r.learner for r in runs.env.select("learner").collect()}
    assert learners == {"learner00", "learner01", "learner02"}  # every run says "jovyan" inside


def test_overhead_is_within_run_and_recovers_the_model(runs):
    spread = A.overhead_spread(A.overhead(runs.summary)).toPandas().set_index("label")
    assert spread.loc["acks_all", "median"] == pytest.approx(0.0)
    assert spread.loc["idempotent", "median"] == pytest.approx(TRUE_OVERHEAD["idempotent"], abs=1e-9)
    # Laptops differ by ±30 % in the model, yet within-run ratios have no spread without noise.
    assert spread.loc["acks1", "max"] - spread.loc["acks1", "min"] == pytest.approx(0.0, abs=1e-9)
    assert spread.loc["idempotent", "learners"] == 3 and spread.loc["idempotent", "runs"] == 6


def test_ack_percentiles_match_numpy(runs, klass):
    got = A.latency_percentiles(runs.samples, "ack").toPandas().set_index("label")
    assert got.loc["acks_all", "p50"] == pytest.approx(ACK_MEDIAN_MS["acks_all"], rel=0.1)
    assert (got.p50 < got.p95).all() and (got.p95 < got.p99).all()


def test_read_committed_latency_grows_with_the_commit_interval(runs):
    e2e = A.e2e_by_commit_interval(runs.samples, runs.params).toPandas()
    rc = e2e[(e2e.isolation == "read_committed") & (e2e.commit_ms > 0)].sort_values("commit_ms")
    assert rc.p50.is_monotonic_increasing and len(rc) == 3
    cmp = A.compare(A.overhead_spread(A.overhead(runs.summary)).toPandas(), e2e)
    assert cmp.agrees.tolist() == [True, True, True]


def test_kit_vs_java_ratio(runs):
    ratios = A.kit_vs_java(runs.summary).toPandas().ratio
    assert ratios.round(6).eq(0.95).all()


def test_no_runs_is_one_sentence(spark, tmp_path):
    with pytest.raises(A.NoRunsError, match="eoslab bench producers"):
        A.load_runs(spark, tmp_path)


def test_lab_checks_accept_the_right_answer_and_reject_a_wrong_one(klass):
    sat = pd.concat(pd.read_parquet(p) for p in klass.rglob("summary.parquet"))
    sat = sat[(sat.phase == "saturation") & (sat.client == "eoslab")]
    right = sat.groupby("label").records_per_s.mean().to_dict()
    assert lab06.check_throughput(right, klass).passed
    with pytest.raises(CheckFailed, match="expected"):
        lab06.check_throughput({k: v * 2 for k, v in right.items()}, klass)
    with pytest.raises(CheckFailed, match="Hint"):
        lab06.check_throughput(None, klass)
    ov = lab06.expected_overheads(klass)
    assert lab06.check_overheads(ov, klass).passed
    with pytest.raises(CheckFailed, match="fractions"):
        lab06.check_overheads({k: v * 100 + 50 for k, v in ov.items()}, klass)


def test_ack_percentiles_check_names_the_figure_it_expected_and_the_hint(klass):
    """A wrong (p50, p95, p99) is shown as the tuple the check recomputed, with the task's hint (it once
    failed on formatting that tuple and showed a TypeError instead)."""
    s = pd.concat(pd.read_parquet(p) for p in klass.rglob("samples.parquet"))
    s = s[s.kind == "ack"]
    right = {k: tuple(np.percentile(g.latency_ms, [50, 95, 99])) for k, g in s.groupby("label")}
    assert lab06.check_ack_percentiles(right, klass).passed
    doubled = {k: tuple(2 * x for x in v) for k, v in right.items()}
    with pytest.raises(CheckFailed, match=r"expected \([0-9.]+, [0-9.]+, [0-9.]+\) recomputed.*kind == 'ack'"):
        lab06.check_ack_percentiles(doubled, klass)
