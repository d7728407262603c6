"""Finding run folders under a tree that changes while it is walked (eoslab/runs/_folders.py ``files_named``).

`make test` keeps its clusters' data under its runs folder; Kafka creates and deletes partition folders there all
the time. ``Path.rglob`` raised FileNotFoundError on a folder that vanished between its listing and its reading,
and `eoslab submit` in the cluster tier failed on it (run 77). Here a folder vanishes exactly there: ``os.scandir``
of it raises as it would."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from eoslab.runs import fault_run_folders, run_folders


def _run(folder: Path, table: str) -> None:
    folder.mkdir(parents=True)
    (folder / f"{table}.parquet").write_bytes(b"")
    (folder / "env.parquet").write_bytes(b"")


def test_a_folder_that_vanishes_during_the_walk_is_skipped(tmp_path: Path, monkeypatch) -> None:
    _run(tmp_path / "a" / "run-1", "summary")
    _run(tmp_path / "b" / "faults-1", "faults")
    vanishing = tmp_path / "kafka-data-gw1" / "broker-2" / "data" / "t-topic-in-1"
    vanishing.mkdir(parents=True)
    scandir = os.scandir

    def racing_scandir(path: str = ".") -> Any:
        if Path(path) == vanishing:
            raise FileNotFoundError(2, "No such file or directory", path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", racing_scandir)
    assert run_folders(tmp_path) == [tmp_path / "a" / "run-1"]
    assert fault_run_folders(tmp_path) == [tmp_path / "b" / "faults-1"]


def test_no_folder_no_runs(tmp_path: Path) -> None:
    assert run_folders(tmp_path / "none") == []
