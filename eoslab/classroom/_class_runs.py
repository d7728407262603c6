"""The class's module-06 runs, from its hand-ins, in one Spark session: who measured on what machine.

The same folder ``eoslab grade --class DIR`` grades: archives are unpacked into ``DIR/.unpacked/`` (as
the grading does; again, so a class folder that was never graded works too) and plain folders read in
place. Each learner's machine comes from the archive's manifest (what ``eoslab submit`` recorded on the
laptop); a folder has no manifest, so its machine is what its newest run recorded. A learner whose
hand-in has no runs, or only runs of an older kit, is left out with a note rather than stopping the class.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from eoslab.classroom._hand_ins import HandIn, gather
from eoslab.errors import GradingError
from eoslab.runs import FORMAT, run_folders, run_format

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from eoslab.analysis import Runs


@dataclass
class ClassHandIn:
    """One learner's runs and machine: ``folders`` the run folders to load, ``source`` where the machine
    facts came from ("manifest" or "runs"), ``check`` the manifest's verdict."""

    learner: str
    machine: str
    source: str
    check: str
    folders: list[Path] = field(default_factory=list)


@dataclass
class ClassRuns:
    """The class's runs as one :class:`eoslab.analysis.Runs`, each learner's machine (``machines``: Spark,
    ``learner``/``machine``), the table of who handed in what (``hand_ins``) and ``notes`` on who is left out."""

    runs: Runs
    machines: DataFrame
    hand_ins: pd.DataFrame
    notes: list[str]


def machine_name(environment: Mapping[str, Any]) -> str:
    """One line for a manifest's ``environment``: cores, memory, OS, architecture."""
    ram = environment.get("ram_gib")
    memory = f"{float(ram):g} GiB" if ram not in (None, "") else "? GiB"
    system = f"{environment.get('os', '?')} {environment.get('machine', '')}".strip()
    return f"{environment.get('cpus', '?')} CPUs, {memory}, {system}"


def _machine_from_runs(folders: list[Path]) -> str:
    """A folder hand-in's machine: what its newest run's ``env`` table recorded (cores, memory, OS, CPU)."""
    env = pd.read_parquet(max(folders, key=lambda f: f.name) / "env.parquet").iloc[0]
    return f"{env['cores']} CPUs, {float(env['memory_gib']):g} GiB, {env['os']} ({env['cpu']})"


def _runs_of(hand: HandIn, notes: list[str]) -> list[Path]:
    if hand.error:
        notes.append(f"{hand.learner}: {hand.error}")
        return []
    folders = run_folders(hand.runs) if hand.runs is not None else []
    if not folders:
        notes.append(f"{hand.learner}: no module-06 runs in the hand-in ({hand.source}): not in the class's figures")
        return []
    old = [f for f in folders if run_format(f) != FORMAT]
    if old:
        notes.append(f"{hand.learner}: {len(old)} run(s) of an older kit set aside ({', '.join(f.name for f in old)})")
    return [f for f in folders if f not in old]


def class_hand_ins(root: str | Path) -> tuple[list[ClassHandIn], list[str]]:
    """Every learner of ``root`` with runs to analyse, sorted by name, and notes on who is left out and why."""
    root = Path(root)
    hands, notes = gather(root)
    out = []
    for hand in hands:
        folders = _runs_of(hand, notes)
        if not folders:
            continue
        if hand.environment:
            out.append(ClassHandIn(hand.learner, machine_name(hand.environment), "manifest", hand.check, folders))
        else:
            out.append(ClassHandIn(hand.learner, _machine_from_runs(folders), "runs", hand.check, folders))
    if not out:
        raise GradingError(
            f"None of the {len(hands)} hand-in(s) in {root} holds module-06 runs: ask the learners to run notebook 06 "
            "(or `eoslab bench producers`) and `eoslab submit` again."
        )
    return out, notes


def load_class(root: str | Path, spark: SparkSession | None = None) -> ClassRuns:
    """The class folder ``root`` (the one ``eoslab grade --class`` grades) as :class:`ClassRuns`, in ``spark``
    (default: :func:`eoslab.analysis.spark_session` without the Kafka source, started only once the folder
    has proved to hold runs: a wrong folder costs a sentence, not a JVM's start)."""
    from eoslab.analysis import load_learners, spark_session

    hands, notes = class_hand_ins(root)
    spark = spark or spark_session(kafka=False, app="eoslab-class")
    runs = load_learners(spark, {h.learner: h.folders for h in hands})
    table = pd.DataFrame(
        [(h.learner, h.machine, h.source, h.check, len(h.folders)) for h in hands],
        columns=["learner", "machine", "machine from", "manifest", "runs"],
    )
    machines = spark.createDataFrame(table[["learner", "machine"]])
    return ClassRuns(runs, machines, table, notes)
