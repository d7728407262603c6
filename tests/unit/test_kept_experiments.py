"""A KAFKA-17754 experiment's last run is kept whole and found again; a record that cannot be read is none."""

from __future__ import annotations

from pathlib import Path

import pytest

from eoslab.demos import _kept as _record
from eoslab.demos.kafka17754 import Experiment


def test_the_last_run_is_kept_and_found_again_saying_when(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _record.last("endtxn", Experiment, "local", tmp_path) is None  # never run
    exp = Experiment("delayed EndTxn", "librdkafka", notes=["a note"], exits=[3, 0], trace=[{"id": 1}])
    assert _record.keep(exp, "endtxn", "local", tmp_path) is exp
    capsys.readouterr()
    found = _record.last("endtxn", Experiment, "local", tmp_path)
    assert found == exp and found is not exp
    assert "reuse=False runs it again" in capsys.readouterr().out
    assert [p.name for p in (tmp_path / _record.FOLDER).iterdir()] == ["local-endtxn.pickle"]  # no part file left
    assert _record.last("produce", Experiment, "local", tmp_path) is None  # each experiment its own record
    assert _record.last("endtxn", Experiment, "docker", tmp_path) is None  # and each backend: a run elsewhere is none


def test_a_record_that_cannot_be_read_counts_as_none(tmp_path: Path) -> None:
    (tmp_path / _record.FOLDER).mkdir()
    (tmp_path / _record.FOLDER / "local-endtxn.pickle").write_bytes(b"half a pickle")
    assert _record.last("endtxn", Experiment, "local", tmp_path) is None


def test_a_record_of_another_kind_counts_as_none(tmp_path: Path) -> None:
    _record.keep({"not": "an experiment"}, "endtxn", "local", tmp_path)
    assert _record.last("endtxn", Experiment, "local", tmp_path) is None
