"""Module 05's fault matrix on the real cluster, run ONCE (a module fixture) at a small size and asserted
cell by cell: the EOS processor is exactly once under every fault; its at-least-once twin duplicates
where a crash or a zombie makes it redo acknowledged work (proof the checker can fail); the zombie is
fenced; the run is written as a faults table beside module 06's runs.

Cost: 12 cells of MIN_RECORDS inputs, each as long as the timeouts its fault waits out (a session of
6 s, a broker's 5 s session and its restart, a 9.9 s socket timeout): about 4-6 min on a quiet
2-core machine. eoslab.demos.pipeline_faults says where each timeout comes from.
"""

from __future__ import annotations

import pytest

import eoslab
from eoslab.bench.faults import matrix_frame, matrix_text, run_faults
from eoslab.demos import FAULTS, KINDS
from eoslab.demos.pipeline_child import EXIT_FATAL
from eoslab.demos.pipeline_faults import MIN_RECORDS
from eoslab.runs import FAULT_COLUMNS, read_faults

pytestmark = [pytest.mark.cluster, pytest.mark.destructive]

EXACTLY_ONCE = ("lost_write", "duplicate", "aborted_read", "missing_output")
CRASHES = ("kill_processor", "zombie")
"""The cells where the twin redoes acknowledged work: its outputs of the cut batch are in the log, its
offsets are not committed, and a new incarnation (or the zombie's replacement) reprocesses the batch."""


@pytest.fixture(scope="module")
def matrix(cluster, tmp_path_factory):
    eoslab.heal(cluster)
    root = tmp_path_factory.mktemp("runs")
    folder, cells = run_faults(cluster, records=MIN_RECORDS, root=root, progress=False)
    print(matrix_text(cells))  # shown with -s, and in the report of a failed test
    yield root, folder, {(c.fault, c.kind): c for c in cells}
    for c in cells:
        for t in (c.input, c.output):
            cluster.admin.delete_topic(t)
    eoslab.heal(cluster)


@pytest.mark.parametrize("fault", FAULTS)
def test_eos_processor_is_exactly_once_under(matrix, fault):
    cell = matrix[2][(fault, "eos")]
    assert {a: cell.verdict.count(a) for a in EXACTLY_ONCE} == dict.fromkeys(EXACTLY_ONCE, 0), (
        f"{cell.verdict}\n{cell.notes}"
    )
    assert cell.verdict.valid(), f"{cell.verdict}\n{cell.notes}"
    assert cell.verdict.stats  # the final reads returned something: the cell really ran


@pytest.mark.parametrize("fault", CRASHES)
def test_at_least_once_twin_duplicates_when_it_redoes_acknowledged_work(matrix, fault):
    cell = matrix[2][(fault, "alo")]
    assert cell.verdict.count("duplicate") > 0, f"{cell.verdict}\n{cell.notes}"
    # duplicates, never a loss: at least once
    assert cell.verdict.count("lost_write") == 0 and cell.verdict.count("missing_output") == 0, str(cell.verdict)


def test_at_least_once_twin_loses_nothing_anywhere(matrix):
    for (fault, kind), cell in matrix[2].items():
        if kind == "alo":
            assert cell.verdict.count("lost_write") == 0, (fault, str(cell.verdict))
            assert cell.verdict.count("missing_output") == 0, (fault, str(cell.verdict))


def test_a_leader_failover_duplicates_nothing_even_for_the_twin(matrix):
    """The twin's producer is idempotent: the Produce retried at the new leader carries the same
    producer id, epoch and sequence, so the batch the dead leader had replicated is not written twice;
    the twin redoes no batch (its offsets commit after the acks)."""
    cell = matrix[2][("kill_output_leader", "alo")]
    assert cell.verdict.count("duplicate") == 0, f"{cell.verdict}\n{cell.notes}"


def test_the_zombie_is_fenced_by_its_replacement(matrix):
    """Two processor handles with one transactional.id: the replacement's init_transactions bumps the
    epoch; the paused one, resumed, meets it (librdkafka: _FENCED, fatal) and stops with exit 3."""
    cell = matrix[2][("zombie", "eos")]
    assert f"exited {EXIT_FATAL}" in cell.notes, cell.notes
    zombie = [h for h in cell.histories if h.name.endswith("-a-1.jsonl")]
    assert len(zombie) == 1
    assert "_FENCED" in zombie[0].with_suffix(".stderr").read_text(), cell.notes


def test_every_fault_landed_mid_work(matrix):
    """Each trigger fired after some batches were committed and before the last: the fault hit a
    processor at work, not an idle one."""
    for (fault, kind), cell in matrix[2].items():
        assert "batch(es) committed before" in cell.notes, (fault, kind, cell.notes)
        assert "(0 batch(es)" not in cell.notes or fault in ("kill_processor", "zombie"), (fault, kind, cell.notes)


def test_the_matrix_is_written_as_a_faults_table_beside_the_runs(matrix):
    root, folder, cells = matrix
    df = read_faults(root)
    assert len(df) == len(FAULTS) * len(KINDS) == len(cells)
    assert set(FAULT_COLUMNS) <= set(df.columns)
    assert set(zip(df.fault, df.kind, strict=True)) == set(cells)
    shown = matrix_frame(list(cells.values()))
    assert list(shown.columns[:2]) == ["fault", "kind"]
    eos = df[df.kind == "eos"]
    assert (eos.duplicate == 0).all() and (eos.lost_write == 0).all() and (eos.aborted_read == 0).all()
