"""`eoslab submit` and the instructor's side of it, without a cluster or a kernel: the archive and its
manifest, bad input in one sentence, unpacking only what submit writes with every hash checked, and a
class folder of archives and plain folders gathered into one hand-in per learner."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from _classroom import Clock, make_course, no_jvm, notebook, tampered

from eoslab import cli
from eoslab.classroom import _submission, grade_class, unpack_submission, write_submission
from eoslab.classroom._hand_ins import FOLDER_CHECK, gather
from eoslab.classroom._submission import MANIFEST, read_manifest
from eoslab.errors import EoslabError


@pytest.fixture(autouse=True)
def _no_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    no_jvm(monkeypatch)


# -- eoslab submit: one archive, with a manifest -------------------------------------------------------------


def test_a_submission_holds_labs_reports_complete_runs_and_their_hashes(tmp_path: Path) -> None:
    course = make_course(tmp_path / "course", {"lab01_a.ipynb": 42, "lab04_b.ipynb": 7}, reports={"lab01_a.ipynb": 2})
    runs = tmp_path / "runs"
    for name in ("summary.parquet", "env.parquet", "samples.parquet"):
        (runs / "r1").mkdir(parents=True, exist_ok=True)
        (runs / "r1" / name).write_bytes(b"parquet " + name.encode())
    (runs / "half").mkdir()
    (runs / "half" / "summary.parquet").write_bytes(b"no env: an interrupted run")
    out = tmp_path / "out"
    out.mkdir()

    archive = write_submission(course, learner="  Ana María ", dest=out, runs=runs, backend="docker")

    assert archive.path.parent == out and archive.path.name.startswith("submission-Ana_María-")
    assert archive.path.suffix == ".zip" and not list(out.glob("*.part"))
    with zipfile.ZipFile(archive.path) as zf:
        names = set(zf.namelist())
        manifest = json.loads(zf.read(MANIFEST))
    assert names == {
        MANIFEST,
        "labs/lab01_a.ipynb",
        "labs/lab04_b.ipynb",
        "labs/lab01_a.report.json",
        "runs/r1/summary.parquet",
        "runs/r1/env.parquet",
        "runs/r1/samples.parquet",
    }
    assert manifest["learner"] == "Ana María" and manifest["kit_version"] and manifest["format"] == 1
    env = manifest["environment"]
    assert env["backend"] == "docker" and env["cpus"] >= 1 and env["ram_gib"] > 0
    assert {"os", "python", "java"} <= set(env)
    assert set(manifest["files"]) == names - {MANIFEST}
    assert "1 run folders" in archive.summary() and "2 lab notebooks, 1 reports" in archive.summary()

    sub = unpack_submission(archive.path, tmp_path / "unpacked")
    assert (sub.learner, sub.problems) == ("Ana María", [])
    assert (sub.labs / "lab04_b.ipynb").read_text() == notebook(7)
    assert (sub.runs / "r1" / "env.parquet").read_bytes() == b"parquet env.parquet"


@pytest.mark.parametrize(
    "learner,labs,said",
    [
        ("ana", {}, "No lab notebooks in "),
        ("   ", {"lab01_a.ipynb": 1}, "Give your name with --name"),
    ],
)
def test_submit_refuses_bad_input_with_a_sentence(
    tmp_path: Path, learner: str, labs: dict[str, int], said: str
) -> None:
    course = tmp_path / "course"
    (course / "labs").mkdir(parents=True)
    for name, answer in labs.items():
        (course / "labs" / name).write_text(notebook(answer))
    with pytest.raises(EoslabError, match=said):
        write_submission(course, learner=learner, dest=tmp_path)
    assert not list(tmp_path.glob("*.zip"))


def test_the_submit_command_says_what_to_do_never_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    course = make_course(tmp_path / "course", {"lab01_a.ipynb": 42})
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal: nobody to ask the name
    assert cli.main(["submit", "--course", str(course), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == 'eoslab: give your name with --name "Your Name" (as your instructor knows you).\n'

    assert cli.main(["submit", "--name", "ana", "--course", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("eoslab: No lab notebooks in ") and err.count("\n") == 1

    runs = tmp_path / "no-runs"
    argv = ["submit", "--name", "ana", "--course", str(course), "--out", str(tmp_path), "--runs", str(runs)]
    assert cli.main(argv) == 0
    assert "hand in this one file" in capsys.readouterr().out
    assert len(list(tmp_path.glob("submission-ana-*.zip"))) == 1


# -- unpacking: only what submit writes, every hash checked -------------------------------------------------


def test_an_archive_changed_after_submit_is_flagged_and_only_submit_shaped_files_are_unpacked(tmp_path: Path) -> None:
    course = make_course(tmp_path / "course", {"lab01_a.ipynb": 7, "lab02_b.ipynb": 7})
    archive = write_submission(course, learner="bo", dest=tmp_path)
    bad = tampered(
        archive.path,
        tmp_path / "bad.zip",
        {
            "labs/lab01_a.ipynb": notebook(42).encode(),  # the answer fixed after submitting
            "labs/lab02_b.ipynb": None,
            "labs/lab03_c.ipynb": notebook(1).encode(),
            "conftest.py": b"import os  # would run inside the instructor's pytest",
            "labs/../../escape.ipynb": b"{}",
            "runs/../eoslab/__init__.py": b"",
        },
    )
    sub = unpack_submission(bad, tmp_path / "out")
    assert sorted(sub.problems) == sorted(
        [
            "labs/lab01_a.ipynb differs from its manifest sha256 (changed after `eoslab submit`)",
            "labs/lab03_c.ipynb is not in the manifest",
            "conftest.py is not a file `eoslab submit` writes: not unpacked",
            "labs/../../escape.ipynb is not a file `eoslab submit` writes: not unpacked",
            "runs/../eoslab/__init__.py is not a file `eoslab submit` writes: not unpacked",
            "labs/lab02_b.ipynb is in the manifest but not in the archive",
        ]
    )
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert "escape.ipynb" not in files and not any(f.endswith(("conftest.py", "__init__.py")) for f in files)


def test_what_is_no_submission_is_named_in_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "junk.zip").write_text("not a zip")
    with pytest.raises(EoslabError, match=r"junk.zip is not a readable submission .*ask the learner to submit again"):
        read_manifest(tmp_path / "junk.zip")
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as zf:
        zf.writestr("labs/lab01_a.ipynb", "{}")
    with pytest.raises(EoslabError, match=r"plain.zip has no manifest.json: it was not written by `eoslab submit`"):
        read_manifest(tmp_path / "plain.zip")


# -- a class folder: archives and folders together ----------------------------------------------------------


def test_gather_takes_each_learners_newest_hand_in_and_sets_the_rest_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    klass = tmp_path / "class"
    klass.mkdir()
    monkeypatch.setattr(_submission, "time", Clock("2025-01-01T09:00Z", "2025-01-01T10:00Z", "2025-01-01T09:30Z"))
    old = write_submission(make_course(tmp_path / "a1", {"lab01_a.ipynb": 1}), learner="ana", dest=klass)
    old.path.rename(klass / "ana-first.zip")
    write_submission(make_course(tmp_path / "a2", {"lab01_a.ipynb": 42}), learner="ana", dest=klass)
    write_submission(make_course(tmp_path / "c", {"lab04_c.ipynb": 42}), learner="cy", dest=klass)
    (klass / "cy").mkdir()  # cy also left a folder: the archive is taken
    (klass / "bo").mkdir()
    (klass / "bo" / "lab01_a.ipynb").write_text(notebook(3))
    (klass / "bo" / "conftest.py").write_text("raise SystemExit")
    (klass / "broken.zip").write_text("no zip")

    hand_ins, notes = gather(klass)

    by = {h.learner: h for h in hand_ins}
    assert sorted(by) == ["ana", "bo", "broken.zip", "cy"]
    assert json.loads(by["ana"].notebooks[0].read_text())["answer"] == 42  # the newer archive
    assert by["ana"].check == "ok" and by["ana"].source.startswith("archive submission-ana-")
    assert by["bo"].check == FOLDER_CHECK and by["bo"].handed == klass / "bo"
    assert [p.name for p in by["bo"].notebooks[0].parent.iterdir()] == ["lab01_a.ipynb"]  # no conftest.py beside it
    assert by["bo"].notebooks[0].is_relative_to(klass / ".unpacked")
    assert "is not a readable submission" in by["broken.zip"].error
    assert notes == [
        "ana: ana-first.zip is older than their other submission: set aside",
        "cy: the folder cy/ is set aside for their archive",
    ]


def test_a_clone_of_a_learners_repository_is_a_folder_hand_in_with_its_labs_folder(tmp_path: Path) -> None:
    """Hand-in through git: the instructor clones each learner's repository into the class folder."""
    clone = tmp_path / "class" / "dee"
    (clone / "labs").mkdir(parents=True)
    (clone / "labs" / "lab02_b.ipynb").write_text(notebook(7))
    (clone / "notebooks").mkdir()
    (clone / "notebooks" / "lab99_not_a_lab.ipynb").write_text(notebook(0))
    (hand_in,), _ = gather(tmp_path / "class")
    assert [p.name for p in hand_in.notebooks] == ["lab02_b.ipynb"]
    assert json.loads(hand_in.notebooks[0].read_text())["answer"] == 7


def test_an_empty_class_folder_is_a_sentence(tmp_path: Path) -> None:
    with pytest.raises(EoslabError, match="has no submissions: put each learner's submission-"):
        grade_class(tmp_path)
