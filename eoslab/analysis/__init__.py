"""PySpark over ``runs/`` (and over topics, with the Spark Kafka source): module 06's figures.

Pure functions of the recorded history (:mod:`eoslab.runs`, written by :mod:`eoslab.bench`): per run, each
mode's throughput and overhead as a median over rounds with a bootstrap interval over rounds, computed in
Spark (``throughput``, ``overhead``, ``bootstrap_median``; several in one Spark job: ``intervals``,
``bootstrap_many``), the smallest effect a run can resolve, the Java peer beside the harness; latency
percentiles with Spark's ``percentile_approx``; read_committed latency against the commit interval; the
spread across a class, and per machine of a class its overhead with an interval, the class's distribution
and its outliers (``machine_overhead``, ``class_distribution``, ``class_outliers``, read aloud by
``class_sentences``); the duplicate / aborted-record audit; module 05's fault matrix (its faults tables, its
output topics audited through Spark's Kafka source); published figures to compare with; the takeaways a run
supports; plots.
"""

from eoslab.analysis._audit import audit_frames, audit_topic, kafka_source, read_topic, topic_values
from eoslab.analysis._class import class_distribution, class_outliers, machine_overhead
from eoslab.analysis._class_report import class_sentences, pick_label, plot_class
from eoslab.analysis._faults import audit_outputs, fault_matrix, load_faults, plot_fault_matrix
from eoslab.analysis._load import Runs, load_learners, load_runs, run_index
from eoslab.analysis._metrics import e2e_by_commit_interval, latency_percentiles, overhead_spread
from eoslab.analysis._module06 import (  # module 06: one run's tables, percentages, the sentences under its figures
    as_percent,
    beside_class,
    class_overheads,
    class_sentence,
    commit_sentences,
    commit_table,
    e2e_sentences,
    one_run,
    percent,
    resolution,
)
from eoslab.analysis._plots import plot_e2e_vs_commit, plot_latency, plot_overhead, plot_throughput
from eoslab.analysis._published import PUBLISHED, Published, compare, published_differences
from eoslab.analysis._report import RunFigures, overhead_verdict, report, report_text, run_figures, takeaways
from eoslab.analysis._rounds import (
    bootstrap_many,
    bootstrap_median,
    intervals,
    kit_vs_java,
    overhead,
    overhead_by_round,
    resolvable,
    round_rows,
    throughput,
    transactions,
)
from eoslab.analysis._session import spark_session
from eoslab.analysis._synthetic import generate_class, generate_run
from eoslab.analysis._where_cost import core_time, cpu_sentences, extra_core_time, plot_core_time
from eoslab.runs import (
    NoRunsError,
    warmup_sentence,  # the line a run's report opens with, for module 06
)

__all__ = [
    "NoRunsError",
    "PUBLISHED",
    "Published",
    "RunFigures",
    "Runs",
    "as_percent",
    "audit_frames",
    "audit_outputs",
    "audit_topic",
    "beside_class",
    "bootstrap_many",
    "bootstrap_median",
    "class_distribution",
    "class_outliers",
    "class_overheads",
    "class_sentence",
    "class_sentences",
    "commit_sentences",
    "commit_table",
    "compare",
    "core_time",
    "cpu_sentences",
    "e2e_by_commit_interval",
    "e2e_sentences",
    "extra_core_time",
    "fault_matrix",
    "generate_class",
    "generate_run",
    "intervals",
    "kafka_source",
    "kit_vs_java",
    "latency_percentiles",
    "load_faults",
    "load_learners",
    "load_runs",
    "machine_overhead",
    "one_run",
    "overhead",
    "overhead_by_round",
    "overhead_spread",
    "overhead_verdict",
    "percent",
    "pick_label",
    "plot_class",
    "plot_core_time",
    "plot_e2e_vs_commit",
    "plot_fault_matrix",
    "plot_latency",
    "plot_overhead",
    "plot_throughput",
    "published_differences",
    "read_topic",
    "report",
    "report_text",
    "resolution",
    "resolvable",
    "round_rows",
    "run_figures",
    "run_index",
    "spark_session",
    "takeaways",
    "throughput",
    "topic_values",
    "transactions",
    "warmup_sentence",
]
