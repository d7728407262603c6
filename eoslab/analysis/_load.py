"""The runs of one learner, or of a class, as Spark DataFrames.

A run folder is any folder holding ``summary.parquet`` and ``env.parquet`` (see
:mod:`eoslab.runs`). An instructor's collection nests them one level deeper,
``class/<learner>/<run_id>/``; the learner is then the folder's name, because the
``learner`` recorded in a run is a login name, and thirty laptops may all say ``jovyan``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from eoslab.runs import NoRunsError, require_format, run_folders

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass
class Runs:
    """Every table of every run, each with ``run`` (the folder, relative to the root) and ``learner``."""

    params: DataFrame
    summary: DataFrame
    samples: DataFrame
    env: DataFrame

    @property
    def throughput(self) -> DataFrame:
        """The saturation rows: one per run × workload × client."""
        return self.summary.where("phase = 'saturation'")


def run_index(root: str | Path) -> list[tuple[str, str, str]]:
    """(run folder as a URI, run name relative to the root, learner folder or '') for every run."""
    base = Path(root).resolve()
    out = []
    for folder in run_folders(base):
        rel = folder.resolve().relative_to(base)
        learner = rel.parts[0] if len(rel.parts) >= 2 else ""
        out.append((folder.resolve().as_uri(), str(rel), learner))
    return out


def load_runs(spark: SparkSession, root: str | Path) -> Runs:
    """Read ``root`` (a learner's ``runs/`` or a class folder) into :class:`Runs`."""
    from pyspark.sql import functions as F

    index = run_index(root)
    if not index:
        raise NoRunsError(f"No runs under {root}: run `eoslab bench producers` (or the first cells of notebook 06).")
    require_format(run_folders(Path(root).resolve()))  # an older kit's run: one sentence, not a schema error
    folders = spark.createDataFrame(index, "folder string, run string, learner_dir string")

    def table(name: str) -> DataFrame:
        df = spark.read.option("mergeSchema", "true").parquet(*[f"{uri}/{name}.parquet" for uri, _, _ in index])
        df = df.withColumn("folder", F.regexp_replace(F.input_file_name(), f"/{name}.parquet$", ""))
        return df

    env = table("env").join(F.broadcast(folders), "folder")
    env = env.withColumn(
        "learner", F.when(F.col("learner_dir") != "", F.col("learner_dir")).otherwise(F.col("learner"))
    ).drop("learner_dir")
    who = env.select("folder", "run", "learner")

    def tagged(name: str) -> DataFrame:
        return table(name).join(F.broadcast(who), "folder").drop("folder")

    return Runs(params=tagged("params"), summary=tagged("summary"), samples=tagged("samples"), env=env.drop("folder"))
