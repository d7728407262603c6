"""Module 05's fault matrix on the real cluster, run ONCE per test session (``fault_run``, root
conftest.py, shared with notebook 05) at the smallest size, and asserted cell by cell from what the run
recorded (its faults table and the processors' histories): the EOS processor is exactly once under
every fault, in a classic group and (for the faults whose recovery goes through the group,
``eoslab.bench.faults.KIP848_FAULTS``) in a KIP-848 group; its at-least-once twin duplicates where a
crash or a zombie makes it redo acknowledged work (proof the checker can fail); the zombie is fenced
under both group protocols; the run is a faults table beside module 06's.

Cost: 12 classic cells and 3 KIP-848 cells of MIN_RECORDS inputs, each as long as the timeouts its
fault waits out (a session of 6 s under both protocols, a broker's 5 s session and its restart, a 9.9 s
socket timeout): about 5-7 min on a quiet 2-core machine. eoslab/demos/pipeline/_faults.py says where
each timeout comes from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from eoslab.bench.faults import KIP848_FAULTS, plan
from eoslab.demos.pipeline import EXIT_FATAL, FAULTS, MIN_RECORDS
from eoslab.runs import FAULT_COLUMNS, read_faults

pytestmark = [pytest.mark.cluster, pytest.mark.destructive]

EXACTLY_ONCE = ("lost_write", "duplicate", "aborted_read", "missing_output")
CRASHES = ("kill_processor", "zombie")
"""The cells where the twin redoes acknowledged work: its outputs of the cut batch are in the log, its
offsets are not committed, and a new incarnation (or the zombie's replacement) reprocesses the batch."""

Cells = dict[tuple[str, str, str], Any]
"""A row of the faults table (its columns as attributes) per (fault, kind, group protocol)."""
EOS_CELLS = [(f, p) for f, k, p in plan() if k == "eos"]
"""Every fault in a classic group, the KIP-848 faults in a KIP-848 group too."""


@pytest.fixture(scope="module")
def cells(fault_run: Path) -> Cells:
    df = pd.read_parquet(fault_run / "faults.parquet")
    print(df[["fault", "kind", "group_protocol", *EXACTLY_ONCE, "seconds"]].to_string())  # with -s, on a failure
    return {(r.fault, r.kind, r.group_protocol): r for r in df.itertuples()}


def counts(row: Any) -> str:
    return f"{ {a: getattr(row, a) for a in (*EXACTLY_ONCE, 'torn_transaction')} }: {row.notes}"


@pytest.mark.parametrize(("fault", "protocol"), EOS_CELLS, ids=[f"{f}-{p}" for f, p in EOS_CELLS])
def test_eos_processor_is_exactly_once_under(cells: Cells, fault: str, protocol: str) -> None:
    row = cells[(fault, "eos", protocol)]
    assert f"type {protocol.upper()}" in row.notes, row.notes  # the group coordinator lists the group so
    assert {a: getattr(row, a) for a in EXACTLY_ONCE} == dict.fromkeys(EXACTLY_ONCE, 0), counts(row)
    assert row.valid, counts(row)
    assert row.records == MIN_RECORDS


@pytest.mark.parametrize("fault", CRASHES)
def test_at_least_once_twin_duplicates_when_it_redoes_acknowledged_work(cells: Cells, fault: str) -> None:
    row = cells[(fault, "alo", "classic")]
    assert row.duplicate > 0, counts(row)
    assert row.lost_write == 0 and row.missing_output == 0, counts(row)  # at least once: never a loss


def test_at_least_once_twin_loses_nothing_anywhere(cells: Cells) -> None:
    for (_, kind, _), row in cells.items():
        if kind == "alo":
            assert row.lost_write == 0 and row.missing_output == 0, counts(row)


def test_a_leader_failover_duplicates_nothing_even_for_the_twin(cells: Cells) -> None:
    """The twin's producer is idempotent: the Produce retried at the new leader carries the same
    producer id, epoch and sequence, so the batch the dead leader had replicated is not written twice;
    and the twin redoes no batch (its offsets commit after the acks)."""
    row = cells[("kill_output_leader", "alo", "classic")]
    assert row.duplicate == 0, counts(row)


@pytest.mark.parametrize("protocol", ["classic", "consumer"] if "zombie" in KIP848_FAULTS else ["classic"])
def test_the_zombie_is_fenced_by_its_replacement(cells: Cells, fault_run: Path, protocol: str) -> None:
    """Two processor handles with one transactional.id: the replacement's init_transactions bumps the
    epoch; the paused one, resumed, meets it (librdkafka: _FENCED, fatal) and stops with exit 3, in a
    classic group as in a KIP-848 one (the fence is the transaction coordinator's, not the group's)."""
    row = cells[("zombie", "eos", protocol)]
    assert f"exited {EXIT_FATAL}" in row.notes, row.notes
    name = row.output_topic.removeprefix("cell-").removesuffix("-out")
    assert "_FENCED" in (fault_run / "histories" / f"{name}-a-1.stderr").read_text(), row.notes


def test_every_fault_landed_mid_work(cells: Cells) -> None:
    """Each trigger fired while the processor had work left: a fault hit a processor at work."""
    for cell, row in cells.items():
        assert "batch(es) committed before" in row.notes, (cell, row.notes)


def test_the_matrix_is_written_as_a_faults_table_beside_the_runs(cells: Cells, fault_run: Path) -> None:
    df = read_faults(fault_run.parent)
    mine = df[df.run == fault_run.name]
    assert len(mine) == len(plan()) == len(cells) == len(FAULTS) * 2 + len(KIP848_FAULTS)
    assert set(FAULT_COLUMNS) <= set(df.columns)
    assert set(zip(mine.fault, mine.kind, mine.group_protocol, strict=True)) == set(cells) == set(plan())
