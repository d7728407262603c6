"""The fault matrix's runs in Spark (module 05): the faults tables of every run, and an independent audit
of the cells' output topics through Spark's Kafka source.

The checker (:mod:`eoslab.history`) judged each cell from the processors' histories and a final read by
librdkafka. The audit here asks the same question of the outputs another way, with another client (the
Java consumer inside Spark's Kafka source, at ``read_committed``) and no history at all: every output
value names the input record it was made from (``topic|partition|offset|...``), so exactly once means
as many distinct origins as records, and as many origins as inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from eoslab.analysis._audit import kafka_source
from eoslab.runs import NoRunsError

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

COUNTS = ("lost_write", "duplicate", "aborted_read", "torn_transaction", "missing_output")
"""The anomaly counts the matrix shows (a run written by an older checker may lack the last ones)."""


def _pandas(df: Any) -> pd.DataFrame:
    """A small Spark result as pandas (PySpark's stubs do not say toPandas returns a DataFrame)."""
    import pandas as pd

    out = df.toPandas()
    assert isinstance(out, pd.DataFrame)
    return out


def load_faults(spark: SparkSession, root: str | Path | None = None) -> DataFrame:
    """Every faults run's table under ``root`` as one Spark DataFrame, with its ``run`` folder."""
    from pyspark.sql import functions as F

    from eoslab.runs import FAULTS_TABLE, fault_run_folders, runs_dir

    folders = fault_run_folders(root)
    if not folders:
        raise NoRunsError(
            f"No faults runs under {runs_dir(root)}: run `eoslab bench faults` (or the notebook's matrix cell) first."
        )
    df = spark.read.option("mergeSchema", "true").parquet(*[str(f / f"{FAULTS_TABLE}.parquet") for f in folders])
    for c in COUNTS:
        if c not in df.columns:
            df = df.withColumn(c, F.lit(0).cast("long"))
    # A run written before the matrix had KIP-848 cells has no group_protocol: its cells were classic.
    protocol = F.col("group_protocol") if "group_protocol" in df.columns else F.lit(None).cast("string")
    df = df.withColumn("group_protocol", F.coalesce(protocol, F.lit("classic")))
    run = F.regexp_extract(F.input_file_name(), r"([^/]+)/[^/]+\.parquet$", 1)
    return df.withColumn("run", run)


def fault_matrix(df: DataFrame) -> pd.DataFrame:
    """Per fault x processor x group protocol over every run: runs, records, the anomaly totals and the runs
    with none, in the course's order of faults (Spark aggregates, pandas orders and shows)."""
    from pyspark.sql import functions as F

    from eoslab.demos.pipeline import FAULTS

    agg = df.groupBy("fault", "kind", "group_protocol").agg(
        F.count("*").alias("runs"),
        F.sum("records").alias("records"),
        *[F.sum(c).alias(c) for c in COUNTS],
        F.sum(F.when(F.col("valid"), 1).otherwise(0)).alias("valid_runs"),
        F.round(F.median("seconds"), 1).alias("median_s"),
    )
    pdf = _pandas(agg)
    order = {f: i for i, f in enumerate(FAULTS)}
    pdf["_o"] = pdf.fault.map(order).fillna(len(order))
    pdf = pdf.sort_values(["_o", "kind", "group_protocol"], ascending=[True, False, True])
    return pdf.drop(columns="_o").reset_index(drop=True)


def _require_topics(bootstrap: str, topics: list[str]) -> None:
    """The run's output topics must be on the cluster at ``bootstrap``: after `eoslab reset` (or on another
    cluster) they are gone, and Spark would fail with a page of Java; one sentence says what to do instead."""
    from confluent_kafka.admin import AdminClient

    present = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=30).topics
    gone = [t for t in topics if t not in present]
    if gone:
        raise NoRunsError(
            f"{len(gone)} of the {len(topics)} output topics of this fault run are not on the cluster at "
            f"{bootstrap} (e.g. {gone[0]}): it was reset, or the run was made on another cluster, since; run "
            "the matrix again (`eoslab bench faults`), then this cell."
        )


def audit_outputs(
    spark: SparkSession, bootstrap: str, topics: list[str], isolation: str = "read_committed"
) -> pd.DataFrame:
    """Per output topic, read through Spark's Kafka source at ``isolation`` from the start to each partition's
    end at that level (the LSO under read_committed, :func:`eoslab.analysis.kafka_source`): records, distinct origins
    (the input record each output names) and ``duplicate`` = records - distinct origins. One Spark job
    over every topic (Spark subscribes to them together)."""
    from pyspark.sql import functions as F

    if not topics:
        raise NoRunsError("No output topics to audit: run the matrix first (`eoslab bench faults`).")
    _require_topics(bootstrap, topics)
    # Up to `latest`: each output's LSO under read_committed, never past a transaction a processor left open
    # (kafka_source says why); isolation explicit, since Spark's default, like Java's, is read_uncommitted.
    raw = kafka_source(spark, bootstrap, ",".join(topics), isolation)
    origin = F.substring_index(F.col("value").cast("string"), "|", 3)
    rows = raw.groupBy("topic").agg(F.count("*").alias("records"), F.countDistinct(origin).alias("origins"))
    pdf = _pandas(rows)
    pdf["duplicate"] = pdf.records - pdf.origins
    found = set(pdf.topic)
    missing = [t for t in topics if t not in found]  # a topic Spark read nothing from still gets its row
    if missing:
        import pandas as pd

        pdf = pd.concat([pdf, pd.DataFrame({"topic": missing, "records": 0, "origins": 0, "duplicate": 0})])
    return pdf.set_index("topic").loc[topics].reset_index()


def plot_fault_matrix(matrix: pd.DataFrame, ax: Any = None) -> Any:
    """Duplicates per fault, the EOS processor beside its twin (bars; the EOS processor in a KIP-848 group
    too where the matrix has it)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.6))
    kip848 = "eos (KIP-848)"
    protocol = matrix.group_protocol if "group_protocol" in matrix.columns else "classic"
    labelled = matrix.assign(column=matrix.kind.where(protocol == "classic", matrix.kind + " (KIP-848)"))
    piv = labelled.pivot_table(index="fault", columns="column", values="duplicate", aggfunc="sum", sort=False)
    piv = piv.fillna(0)[[k for k in ("eos", "alo", kip848) if k in piv.columns]]
    piv.plot.bar(ax=ax, color={"eos": "#1b7837", "alo": "#b2182b", kip848: "#5aae61"}, rot=20)
    ax.set_ylabel("duplicates (read_committed)")
    ax.set_xlabel("")
    ax.set_title("The fault matrix: duplicates per cell, EOS processor vs its at-least-once twin")
    for i, (_, r) in enumerate(piv.iterrows()):
        for j, v in enumerate(r):
            ax.annotate(f"{v:.0f}", (i + (j - 0.5) * 0.25, v), ha="center", va="bottom", fontsize=8)
    return ax
