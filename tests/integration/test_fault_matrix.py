"""Module 05's fault matrix on the real cluster, run ONCE per test session (``fault_run``, root
conftest.py, shared with notebook 05) at the smallest size, and asserted cell by cell from what the run
recorded (its faults table and the processors' histories): the EOS processor is exactly once under
every fault; its at-least-once twin duplicates where a crash or a zombie makes it redo acknowledged
work (proof the checker can fail); the zombie is fenced; the run is a faults table beside module 06's.

Cost: 12 cells of MIN_RECORDS inputs, each as long as the timeouts its fault waits out (a session of
6 s, a broker's 5 s session and its restart, a 9.9 s socket timeout): about 4-6 min on a quiet
2-core machine. eoslab/demos/pipeline/_faults.py says where each timeout comes from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from eoslab.demos import FAULTS, KINDS
from eoslab.demos.pipeline import EXIT_FATAL, MIN_RECORDS
from eoslab.runs import FAULT_COLUMNS, read_faults

pytestmark = [pytest.mark.cluster, pytest.mark.destructive]

EXACTLY_ONCE = ("lost_write", "duplicate", "aborted_read", "missing_output")
CRASHES = ("kill_processor", "zombie")
"""The cells where the twin redoes acknowledged work: its outputs of the cut batch are in the log, its
offsets are not committed, and a new incarnation (or the zombie's replacement) reprocesses the batch."""

Cells = dict[tuple[str, str], Any]
"""A row of the faults table (its columns as attributes) per (fault, kind)."""


@pytest.fixture(scope="module")
def cells(fault_run: Path) -> Cells:
    df = pd.read_parquet(fault_run / "faults.parquet")
    print(df[["fault", "kind", *EXACTLY_ONCE, "seconds"]].to_string())  # shown with -s, and on a failure
    return {(r.fault, r.kind): r for r in df.itertuples()}


def counts(row: Any) -> str:
    return f"{ {a: getattr(row, a) for a in (*EXACTLY_ONCE, 'torn_transaction')} }: {row.notes}"


@pytest.mark.parametrize("fault", FAULTS)
def test_eos_processor_is_exactly_once_under(cells: Cells, fault: str) -> None:
    row = cells[(fault, "eos")]
    assert {a: getattr(row, a) for a in EXACTLY_ONCE} == dict.fromkeys(EXACTLY_ONCE, 0), counts(row)
    assert row.valid, counts(row)
    assert row.records == MIN_RECORDS


@pytest.mark.parametrize("fault", CRASHES)
def test_at_least_once_twin_duplicates_when_it_redoes_acknowledged_work(cells: Cells, fault: str) -> None:
    row = cells[(fault, "alo")]
    assert row.duplicate > 0, counts(row)
    assert row.lost_write == 0 and row.missing_output == 0, counts(row)  # at least once: never a loss


def test_at_least_once_twin_loses_nothing_anywhere(cells: Cells) -> None:
    for (_, kind), row in cells.items():
        if kind == "alo":
            assert row.lost_write == 0 and row.missing_output == 0, counts(row)


def test_a_leader_failover_duplicates_nothing_even_for_the_twin(cells: Cells) -> None:
    """The twin's producer is idempotent: the Produce retried at the new leader carries the same
    producer id, epoch and sequence, so the batch the dead leader had replicated is not written twice;
    and the twin redoes no batch (its offsets commit after the acks)."""
    row = cells[("kill_output_leader", "alo")]
    assert row.duplicate == 0, counts(row)


def test_the_zombie_is_fenced_by_its_replacement(cells: Cells, fault_run: Path) -> None:
    """Two processor handles with one transactional.id: the replacement's init_transactions bumps the
    epoch; the paused one, resumed, meets it (librdkafka: _FENCED, fatal) and stops with exit 3."""
    row = cells[("zombie", "eos")]
    assert f"exited {EXIT_FATAL}" in row.notes, row.notes
    name = row.output_topic.removeprefix("cell-").removesuffix("-out")
    assert "_FENCED" in (fault_run / "histories" / f"{name}-a-1.stderr").read_text(), row.notes


def test_every_fault_landed_mid_work(cells: Cells) -> None:
    """Each trigger fired while the processor had work left: a fault hit a processor at work."""
    for (fault, kind), row in cells.items():
        assert "batch(es) committed before" in row.notes, (fault, kind, row.notes)


def test_the_matrix_is_written_as_a_faults_table_beside_the_runs(cells: Cells, fault_run: Path) -> None:
    df = read_faults(fault_run.parent)
    mine = df[df.run == fault_run.name]
    assert len(mine) == len(FAULTS) * len(KINDS) == len(cells)
    assert set(FAULT_COLUMNS) <= set(df.columns)
    assert set(zip(mine.fault, mine.kind, strict=True)) == set(cells)
