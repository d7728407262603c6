"""The producer benchmark on the real cluster: a run folder with every table, and the lab's two directions."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from eoslab.bench.producers import summary_text
from eoslab.runs import Workload

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]


def test_a_run_records_every_table(bench_runs):
    (folder,) = [p for p in bench_runs.iterdir() if p.is_dir()][:1]
    summary = pd.read_parquet(folder / "summary.parquet")
    samples = pd.read_parquet(folder / "samples.parquet")
    env = pd.read_parquet(folder / "env.parquet").iloc[0]
    params = pd.read_parquet(folder / "params.parquet")
    assert set(params.label) == set(summary.label)
    sat = summary[summary.phase == "saturation"]
    assert (sat.records_per_s > 0).all() and (sat.errors == 0).all()
    # Every record of the fixed-load phase was acked once and read once per isolation level.
    counts = samples.groupby(["label", "kind"]).seq.nunique().unstack("kind")
    offered = params.set_index("label").eval("rate * duration_s").astype(int)
    for kind in ("ack", "e2e_read_committed", "e2e_read_uncommitted"):
        assert (counts[kind] == offered[counts.index]).all(), kind
    assert env.kafka_version == "4.1.2" and env.cores >= 1 and env.librdkafka_version
    assert "overhead" in summary_text(folder)


def test_read_committed_waits_for_the_commit(bench_runs):
    """At a fixed load, read_committed's median e2e latency is at least read_uncommitted's for transactions."""
    samples = pd.concat(pd.read_parquet(p / "samples.parquet") for p in bench_runs.iterdir() if p.is_dir())
    txn = samples[samples.label.str.startswith("txn_")]
    p50 = txn.groupby("kind").latency_ms.median()
    assert p50["e2e_read_committed"] >= p50["e2e_read_uncommitted"] * 0.9


def test_the_java_peer_runs_with_the_same_settings(cluster, topic_name):
    from eoslab.bench._peer import run_peer

    w = Workload("transactional", commit_ms=100, count=5000)
    cluster.admin.create_topic(topic_name, partitions=3)
    try:
        r = run_peer(cluster, w, topic_name)
    finally:
        cluster.admin.delete_topic(topic_name)
    assert r is not None and r.records == 5000 and r.records_per_s > 0


def test_the_untouched_lab_fails_at_every_graded_cell(bench_runs):
    from eoslab.grading import grade_notebook, graded_cells

    lab = ROOT / "labs" / "lab06_cost.ipynb"
    report = grade_notebook(lab, cell_timeout=120)
    tasks = {c["task"] for c in graded_cells(json.loads(lab.read_text()))}
    assert {t.task for t in report.tasks} == tasks
    assert all(not t.passed for t in report.tasks), report.table()
