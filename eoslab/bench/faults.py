"""``eoslab bench faults``: module 05's fault matrix, every fault x (EOS processor, at-least-once twin).

Each cell is :func:`eoslab.demos.run_cell`: a fresh input, the processor through the fault proxy, the
fault at a known point of its work, healed, the output judged by the history checker. The run is
written as ``runs/faults-<run_id>/`` (:mod:`eoslab.runs`), beside module 06's runs, and printed as a
table of anomaly counts per cell::

    folder, cells = run_faults(cluster)              # ~4-6 min on a quiet 2-core laptop
    print(matrix_text(cells))
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from eoslab.demos.pipeline import FAULTS, KINDS, CellResult, run_cell
from eoslab.errors import EoslabError
from eoslab.runs import fault_run_folders, fingerprint, new_run_id, runs_dir, write_faults_run

if TYPE_CHECKING:
    import pandas as pd

    from eoslab.cluster import Cluster

__all__ = [
    "DEFAULT_RECORDS",
    "KIP848_FAULTS",
    "SHOWN",
    "column_of",
    "ensure_fault_run",
    "estimate_s",
    "matrix_frame",
    "matrix_text",
    "plan",
    "run_faults",
]

DEFAULT_RECORDS = 200
"""Inputs per cell: ten batches of 20, so the fault (at the 2nd-3rd request of its kind) lands with
most of the work still to do. A cell's time is set by the timeouts its fault waits out (a session,
a broker election, a socket timeout, a broker restart), not by the records: 200 keeps the matrix
within 6 min on a quiet 2-core laptop; ``--records`` for more."""

CELL_S = {
    "kill_processor": 16.0,  # the killed member's session (6 s), the restart's join, the catch-up
    "kill_output_leader": 30.0,  # the broker's session (5 s), an election, the broker's restart and its ISR
    "kill_txn_coordinator": 30.0,
    "kill_group_coordinator": 30.0,
    "drop_endtxn_response": 18.0,  # socket.timeout.ms = 9.9 s before librdkafka resends the EndTxn
    "zombie": 22.0,  # the paused member's session (6 s), the replacement's catch-up, the zombie's wake
}
"""What a cell costs on a quiet 2-core laptop (for the estimate printed before a run starts)."""

KIP848_FAULTS: tuple[str, ...] = ("kill_processor", "kill_group_coordinator", "zombie")
"""The faults the EOS processor also meets in a KIP-848 group (``group.protocol=consumer``) by default: the
ones whose recovery goes through the group (a dead member's session, the group coordinator's failover, a
paused member and its successor). A partition leader's or the transaction coordinator's death and a lost
EndTxn answer never touch the group, so their KIP-848 cells would repeat the classic ones at 3 x 20-30 s;
``eoslab bench faults --kip848 all`` runs them too."""

SHOWN = ("lost_write", "duplicate", "aborted_read", "torn_transaction", "missing_output")
"""The anomalies the printed table shows (the Parquet rows keep every one the checker counted)."""


Planned = tuple[str, str, str]
"""One cell to run: (fault, kind, group protocol)."""


def plan(
    faults: tuple[str, ...] = FAULTS, kinds: tuple[str, ...] = KINDS, kip848: tuple[str, ...] = KIP848_FAULTS
) -> list[Planned]:
    """The cells of a run, in the order the course tells them: per fault, each kind in the classic group
    protocol, then the EOS processor in a KIP-848 group where ``kip848`` names the fault."""
    cells = []
    for fault in faults:
        cells += [(fault, kind, "classic") for kind in kinds]
        if "eos" in kinds and fault in kip848:
            cells.append((fault, "eos", "consumer"))
    return cells


def estimate_s(
    faults: tuple[str, ...] = FAULTS, kinds: tuple[str, ...] = KINDS, kip848: tuple[str, ...] = KIP848_FAULTS
) -> float:
    return sum(CELL_S[f] for f, _, _ in plan(faults, kinds, kip848))


def column_of(kind: str, group_protocol: str = "classic") -> str:
    """A cell's column in the printed matrix: its kind, marked when its group speaks KIP-848."""
    return kind if group_protocol == "classic" else f"{kind} (KIP-848)"


def run_faults(
    cluster: Cluster,
    *,
    records: int = DEFAULT_RECORDS,
    faults: tuple[str, ...] = FAULTS,
    kinds: tuple[str, ...] = KINDS,
    kip848: tuple[str, ...] = KIP848_FAULTS,
    root: str | Path | None = None,
    progress: bool = True,
) -> tuple[Path, list[CellResult]]:
    """Run every cell of :func:`plan`, write the run folder (histories, faults table, env row); the folder
    and the cells that finished (one that could not is a row with no counts and the error as its notes)."""
    from tqdm import tqdm

    from eoslab._progress import progress_bar

    run_id = new_run_id()
    folder = runs_dir(root) / f"faults-{run_id}"
    env = fingerprint(run_id, cluster.backend.name, "faults")
    cells: list[CellResult] = []
    rows: list[dict[str, object]] = []
    started = time.monotonic()
    todo = plan(faults, kinds, kip848)
    bar = progress_bar("faults", total=len(todo), unit="cell", delay=0.0) if progress else tqdm(disable=True)
    try:
        for fault, kind, protocol in todo:
            bar.set_description(f"{fault} × {column_of(kind, protocol)}")
            t0 = time.monotonic()
            try:
                cell = run_cell(
                    cluster, fault, kind, records=records, run_dir=folder / "histories", group_protocol=protocol
                )
            except EoslabError as e:  # the cell healed what it broke; the run goes on and says why
                rows.append(failed_row(run_id, fault, kind, records, time.monotonic() - t0, e, protocol))
            else:
                cells.append(cell)
                rows.append({"run_id": run_id, **cell.row()})
            bar.update(1)
    finally:
        bar.close()
    env["seconds"] = env["wall_s"] = round(time.monotonic() - started, 1)
    env["records_per_cell"] = records
    write_faults_run(folder, rows, env)
    return folder, cells


def failed_row(
    run_id: str, fault: str, kind: str, records: int, seconds: float, error: Exception, group_protocol: str = "classic"
) -> dict[str, object]:
    """A cell that could not finish (a processor that never caught up): no counts, ``valid`` false, the
    error as its notes, so the table shows it and a reader cannot take it for a clean cell."""
    return {
        "run_id": run_id,
        "fault": fault,
        "kind": kind,
        "group_protocol": group_protocol,
        "records": records,
        "seconds": round(seconds, 2),
        "valid": False,
        **dict.fromkeys(SHOWN, None),
        "input_topic": "",
        "output_topic": "",
        "histories": 0,
        "notes": f"the cell did not finish: {error}",
    }


def matrix_frame(cells: list[CellResult]) -> pd.DataFrame:
    """One row per cell: fault, kind, the shown anomaly counts, seconds, valid."""
    import pandas as pd

    rows = []
    for c in cells:
        counts = c.verdict.counts
        rows.append(
            {
                "fault": c.fault,
                "kind": c.kind,
                "group_protocol": c.group_protocol,
                **{a: counts.get(a, 0) for a in SHOWN},
                "seconds": round(c.seconds, 1),
                "valid": c.verdict.valid(),
            }
        )
    return pd.DataFrame(rows)


def _counts_column(cell: CellResult | None, width: int) -> str:
    """One kind's block of a row: the cell's count of each shown anomaly, ``-`` where there is no cell."""
    counts = cell.verdict.counts if cell else {}
    return " | " + " ".join(f"{counts.get(a, '-'):>{width}}" for a in SHOWN)


def _header(kinds: list[str], width: int) -> list[str]:
    """The kinds centred over their blocks, then the anomalies' names over their columns."""
    heads = [a.replace("_", " ") for a in SHOWN]
    return [
        f"{'':<24}" + "".join(f"{k:^{(width + 1) * len(SHOWN) + 3}}" for k in kinds),
        f"{'fault':<24}" + "".join(" | " + " ".join(f"{h:>{width}}" for h in heads) for _ in kinds),
    ]


def _columns_present(present: set[str]) -> list[str]:
    """The ``present`` columns in the matrix's order: each kind in a classic group, then in a KIP-848 one."""
    order = [column_of(k, p) for p in ("classic", "consumer") for k in KINDS]
    return [k for k in order if k in present]


def matrix_text(cells: list[CellResult]) -> str:
    """The matrix as a terminal table: a row per fault, the anomaly counts of EOS | twin | EOS in a KIP-848
    group side by side (``-`` where a fault has no such cell)."""
    width = max(len(a) for a in SHOWN)  # a name's "_" printed as " ": the same length
    by = {(c.fault, column_of(c.kind, c.group_protocol)): c for c in cells}
    columns = _columns_present({col for _, col in by})
    faults = [f for f in FAULTS if f in {c.fault for c in cells}]
    rows = [f"{f:<24}" + "".join(_counts_column(by.get((f, k)), width) for k in columns) for f in faults]
    return "\n".join([*_header(columns, width), *rows])


def ensure_fault_run(cluster: Cluster, root: str | Path | None = None, records: int | None = None) -> Path:
    """The newest faults run under ``root`` (:func:`eoslab.runs.runs_dir`), the matrix run first if there
    is none (notebook 05: a learner who ran ``eoslab bench faults`` sees that run)."""
    from eoslab.demos.pipeline import MIN_RECORDS

    found = fault_run_folders(root)
    if found:
        return max(found, key=lambda f: (f / "faults.parquet").stat().st_mtime)
    n = records or MIN_RECORDS
    print(f"No fault matrix run under {runs_dir(root)}: running it now ({n} records per cell, "
          f"about {estimate_s() / 60:.0f} min).")  # fmt: skip
    folder, _ = run_faults(cluster, records=n, root=root)
    return folder
