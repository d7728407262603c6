"""The fault matrix's pure pieces, without a cluster: every cell has a trigger, ids land on the wanted
coordinator, the faults table is written and read back (and refused without its columns), the printed
matrix shows every cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from eoslab.bench.faults import KIP848_FAULTS, SHOWN, estimate_s, matrix_frame, matrix_text, plan
from eoslab.demos.pipeline import FAULTS, KINDS, TRIGGERS, VICTIM, CellResult, PipelineError, key_led_by
from eoslab.history import ANOMALIES, Cases, Verdict
from eoslab.inspect import coordinator_partition
from eoslab.runs import FAULT_COLUMNS, RunsFormatError, fault_run_folders, read_faults, run_folders, write_faults_run

ENV = {
    c: 0
    for c in (
        "run_id format learner started_at matrix rounds seconds cpu cores memory_gib os python kafka_version "
        "client client_version librdkafka_version java backend load1_at_start"
    ).split()
}


def verdict(**counts: int) -> Verdict:
    return Verdict({n: Cases(ANOMALIES[n], counts.get(n, 0)) for n in ANOMALIES}, {"read_committed": 1})


def cell(fault: str, kind: str, protocol: str = "classic", **counts: int) -> CellResult:
    return CellResult(fault, kind, 80, 1.5, verdict(**counts), (Path("h.jsonl"),), "notes", "in", "out", protocol)


def test_every_cell_of_the_matrix_has_a_trigger() -> None:
    assert set(TRIGGERS) == {(f, k) for f in FAULTS for k in KINDS}
    for (fault, _), t in TRIGGERS.items():
        assert t.action in ("delay_response", "drop_response") and t.nth >= 2
        assert not t.at_victim or fault in VICTIM  # only a node fault has a victim broker


def test_an_id_is_chosen_whose_coordinator_is_the_wanted_broker() -> None:
    leaders = {p: 1 + p % 3 for p in range(50)}
    for wanted in ({1}, {3}, {2, 3}):
        key = key_led_by(leaders, 50, "pipeline-x", wanted)
        assert leaders[coordinator_partition(key, 50)] in wanted
    with pytest.raises(PipelineError, match="heal"):
        key_led_by(leaders, 50, "pipeline-x", {7})


def test_a_cell_row_has_the_faults_table_columns() -> None:
    row = {"run_id": "r", **cell("zombie", "alo", duplicate=3).row()}
    assert set(FAULT_COLUMNS) <= set(row)
    assert row["duplicate"] == 3 and row["valid"] is False


def test_the_faults_table_is_written_beside_the_runs_and_read_back(tmp_path: Path) -> None:
    rows = [{"run_id": "r1", **cell(f, k).row()} for f in FAULTS for k in KINDS]
    write_faults_run(tmp_path / "faults-r1", rows, {**ENV, "run_id": "r1"})
    df = read_faults(tmp_path)
    assert len(df) == 12 and set(df.run) == {"faults-r1"}
    assert fault_run_folders(tmp_path) == [tmp_path / "faults-r1"]
    assert run_folders(tmp_path) == []  # module 06's readers pass a faults run by


def test_a_faults_table_without_its_columns_is_refused(tmp_path: Path) -> None:
    row = cell("zombie", "eos").row()
    del row["duplicate"]
    with pytest.raises(RunsFormatError, match="duplicate"):
        write_faults_run(tmp_path / "x", [{"run_id": "r", **row}], ENV)


def test_the_printed_matrix_shows_every_cell_and_count() -> None:
    cells = [cell(f, k, duplicate=7 if (f, k) == ("zombie", "alo") else 0) for f in FAULTS for k in KINDS]
    text = matrix_text(cells)
    assert all(f in text for f in FAULTS) and "eos" in text and "alo" in text
    zombie = next(line for line in text.splitlines() if line.startswith("zombie"))
    assert zombie.split("|")[2].split()[SHOWN.index("duplicate")] == "7"
    frame = matrix_frame(cells)
    assert len(frame) == 12 and frame.loc[frame.kind == "alo", "duplicate"].sum() == 7


def test_a_duplicate_whose_first_writer_was_killed_is_found_by_its_origin() -> None:
    """The first copy's writer died before its delivery report (no Sent in any history): the output
    value still names its input, and ``origin=`` lets the checker see the second copy as a duplicate."""
    from eoslab.demos.pipeline import origin_of, output_value
    from eoslab.history import FinalRead, Position, ReadRecord, check

    src = Position("in", 0, 7)
    first, second = output_value(src, "p-1-11", 1, "v7"), output_value(src, "p-2-12", 1, "v7")
    rc = FinalRead("out", "read_committed", (ReadRecord(0, 0, first), ReadRecord(0, 1, second)), {0: 2})
    assert check([[]], [rc]).count("duplicate") == 0  # blind without it
    assert check([[]], [rc], origin=origin_of).count("duplicate") == 1
    assert origin_of("not a pipeline value") is None and origin_of(None) is None


def test_what_the_client_did_after_a_lost_answer_is_read_from_the_trace() -> None:
    from eoslab.demos.pipeline import resent

    rows = [
        {"api": "EndTxn", "time": 10.0, "fate": "forwarded", "response": {"error": "NONE"}},
        {"api": "EndTxn", "time": 11.0, "fate": "response dropped by proxy", "response": None},
        {"api": "EndTxn", "time": 20.9, "fate": "forwarded", "response": {"error": "NONE"}},
    ]
    assert resent(rows) == "the client's next EndTxn came 9.9 s later: NONE"
    assert "did not fire" in resent(rows[:1])
    assert "no EndTxn after" in resent(rows[:2])


def test_the_eos_processor_meets_the_group_faults_in_a_kip848_group_too() -> None:
    cells = plan()
    assert [c for c in cells if c[2] == "classic"] == [(f, k, "classic") for f in FAULTS for k in KINDS]
    assert [(f, k) for f, k, p in cells if p == "consumer"] == [(f, "eos") for f in KIP848_FAULTS]
    assert plan(kip848=()) == [(f, k, "classic") for f in FAULTS for k in KINDS]
    assert plan(kinds=("alo",)) == [(f, "alo", "classic") for f in FAULTS]  # KIP-848 cells are the EOS processor's
    assert estimate_s() > estimate_s(kip848=()) and set(KIP848_FAULTS) < set(FAULTS)


def test_the_printed_matrix_gives_the_kip848_cells_a_column_of_their_own() -> None:
    cells = [cell(f, k, p, duplicate=2 if p == "consumer" and f == "zombie" else 0) for f, k, p in plan()]
    text = matrix_text(cells)
    assert "eos (KIP-848)" in text.splitlines()[0]
    zombie = next(line for line in text.splitlines() if line.startswith("zombie"))
    assert zombie.split("|")[3].split()[SHOWN.index("duplicate")] == "2"
    leader = next(line for line in text.splitlines() if line.startswith("kill_output_leader"))
    assert set(leader.split("|")[3].split()) == {"-"}  # no KIP-848 cell for a partition leader's death
    frame = matrix_frame(cells)
    assert list(frame.group_protocol).count("consumer") == len(KIP848_FAULTS)
    row = cells[-1].row()
    assert row["group_protocol"] == "consumer" and row["kind"] == "eos"
