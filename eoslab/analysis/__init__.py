"""PySpark over ``runs/`` (and over topics, with the Spark Kafka source): module 06's figures.

Pure functions of the recorded history (:mod:`eoslab.runs`, written by :mod:`eoslab.bench`): throughput,
overhead ratios within a run, latency percentiles with Spark's ``percentile_approx``,
read_committed latency against the commit interval, the spread across a class, the
duplicate / aborted-record audit, published figures to compare with, and plots.
"""

from eoslab.analysis._audit import audit_topic, read_topic
from eoslab.analysis._load import NoRunsError, Runs, load_runs, run_index
from eoslab.analysis._metrics import (
    e2e_by_commit_interval,
    kit_vs_java,
    latency_percentiles,
    overhead,
    overhead_spread,
    throughput,
)
from eoslab.analysis._plots import plot_e2e_vs_commit, plot_latency, plot_overhead, plot_throughput
from eoslab.analysis._published import PUBLISHED, Published, compare
from eoslab.analysis._selfbench import analyse_all, bench_analyse
from eoslab.analysis._session import spark_session
from eoslab.analysis._synthetic import generate_class, generate_run

__all__ = [
    "NoRunsError",
    "PUBLISHED",
    "Published",
    "Runs",
    "analyse_all",
    "audit_topic",
    "bench_analyse",
    "compare",
    "e2e_by_commit_interval",
    "generate_class",
    "generate_run",
    "kit_vs_java",
    "latency_percentiles",
    "load_runs",
    "overhead",
    "overhead_spread",
    "plot_e2e_vs_commit",
    "plot_latency",
    "plot_overhead",
    "plot_throughput",
    "read_topic",
    "run_index",
    "spark_session",
    "throughput",
]
