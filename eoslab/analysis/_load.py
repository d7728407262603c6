"""The runs of one learner, or of a class, as Spark DataFrames.

A run folder is any folder holding ``summary.parquet`` and ``env.parquet`` (see
:mod:`eoslab.runs`). An instructor's collection nests them one level deeper,
``class/<learner>/<run_id>/``; the learner is then the folder's name, because the
``learner`` recorded in a run is a login name, and thirty laptops may all say ``jovyan``.
A class's hand-ins (``eoslab submit`` archives, unpacked by the grading side) name the learner
from their manifest instead: :func:`load_learners` takes the names and the run folders as given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    index = run_index(root)
    if not index:
        raise NoRunsError(f"No runs under {root}: run `eoslab bench producers` (or the first cells of notebook 06).")
    require_format(run_folders(Path(root).resolve()))  # an older kit's run: one sentence, not a schema error
    return _load_index(spark, index)


def load_learners(spark: SparkSession, runs: Mapping[str, Sequence[str | Path]]) -> Runs:
    """Read each learner's run folders (``{learner: [run folder, ...]}``) into one :class:`Runs`, the learner
    named by the caller: a class's hand-ins unpack into folders named for the archive, not for the person."""
    folders = [(learner, Path(f).resolve()) for learner, fs in sorted(runs.items()) for f in fs]
    if not folders:
        raise NoRunsError(f"No run folders given for {len(runs)} learner(s): each one's runs/ holds none.")
    require_format([f for _, f in folders])
    return _load_index(spark, [(f.as_uri(), f"{learner}/{f.name}", learner) for learner, f in folders])


def _load_index(spark: SparkSession, index: list[tuple[str, str, str]]) -> Runs:
    """The four tables of the runs of ``index`` (as :func:`run_index` gives it), each row tagged."""
    from pyspark.sql import functions as F

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
