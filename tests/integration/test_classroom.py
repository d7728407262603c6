"""The classroom end to end, with real kernels under nbval: `eoslab submit`'s archives and plain folders
graded together by `eoslab grade --class`, a report edited with its notebook not counted, a class run killed
halfway (SIGINT, SIGKILL) resumed without regrading, two workers on one cluster giving the gradebook one
gives, with labs that must run alone never overlapping another; and two workers on clusters of their own
grading lab 04's solution as one does, the cluster started for the run stopped at its end.

The notebooks are the grader's sample lab cut short (they never touch a cluster: graded with
``--one-cluster``, so no cluster is started for them), plus a cell that writes a tally line when a notebook
starts and ends being graded (``$EOSLAB_TEST_TALLY``): that is how regrades are counted.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from eoslab.classroom import lab_from_solution, write_submission
from eoslab.classroom._clusters import slot_env, slot_runs
from eoslab.classroom._exports import FEEDBACK, LMS_CSV
from tests.formats import read_canvas_gradebook

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "grading" / "solution_sample.ipynb"
TALLY = "EOSLAB_TEST_TALLY"
SLEEP = "EOSLAB_TEST_SLEEP"
MEET = "EOSLAB_TEST_MEET"
KEEP = ("d846f207", "ba1c0e84", "fce23abc", "dd2fc6ff", "b6c6555f")
"""The sample's cells kept: title, imports, the answer, task t1 (2 points, the answer), t2 (1 point, always fails)."""

TALLY_CELL = """import os, time
if os.environ.get("EOSLAB_TEST_TALLY"):
    who = os.path.basename(os.path.dirname(os.getcwd())).rsplit("-", 1)[0] + "/{lab}"
    with open(os.environ["EOSLAB_TEST_TALLY"], "a") as fh:
        fh.write(f"{{who}} start {{time.time():.3f}}\\n")
    meet, until = int(os.environ.get("EOSLAB_TEST_MEET", "0")), time.time() + 60
    while "{lab}".startswith("lab04") and meet and time.time() < until:
        marks = [line.split() for line in open(os.environ["EOSLAB_TEST_TALLY"]) if "/lab04" in line]
        started = {{m[0] for m in marks if m[1] == "start"}}
        if len(started) >= meet or started - {{m[0] for m in marks if m[1] == "end"}} - {{who}}:
            break  # another lab 04 is in this cell now, or every one has started: nobody left to wait for
        time.sleep(0.05)
    time.sleep(float(os.environ.get("EOSLAB_TEST_SLEEP", "0")))
    with open(os.environ["EOSLAB_TEST_TALLY"], "a") as fh:
        fh.write(f"{{who}} end {{time.time():.3f}}\\n")
"""
"""With ``$EOSLAB_TEST_MEET`` = N, a lab 04 waits in this cell (up to 60 s) until another lab 04 is in it too, or
all N have started: two jobs the scheduler runs at once then overlap here whatever their kernels' start-up took
(run 71: kernels started 5-10 s apart, so 4 s sleeps alone missed each other); jobs run one after another never
meet, each waiting its 60 s out."""


def _notebook(lab: str, solved: bool) -> str:
    nb = json.loads(SAMPLE.read_text())
    nb["cells"] = [c for c in nb["cells"] if c.get("id") in KEEP]
    tally: dict[str, object] = {
        "cell_type": "code",
        "id": "tally0",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
    }
    nb["cells"].insert(2, {**tally, "source": TALLY_CELL.format(lab=lab)})
    return json.dumps(nb if solved else lab_from_solution(nb), indent=1)


def _course(root: Path, labs: dict[str, bool]) -> Path:
    (root / "labs").mkdir(parents=True)
    for lab, solved in labs.items():
        (root / "labs" / lab).write_text(_notebook(lab, solved))
    return root


def _class(root: Path, learners: dict[str, dict[str, bool]]) -> Path:
    """A class folder holding one `eoslab submit` archive per learner."""
    klass = root / "class"
    klass.mkdir(parents=True)
    for learner, labs in learners.items():
        write_submission(_course(root / "courses" / learner, labs), learner=learner, dest=klass, runs=root / "none")
    return klass


def _instructor(root: Path) -> Path:
    """The instructor's course, beside the class folder: the sample's solution as each lab, which the
    rerun takes the check cells from (``--course``)."""
    if not root.is_dir():
        (root / "solutions").mkdir(parents=True)
        for lab in ("lab04_a.ipynb", "lab99_b.ipynb"):
            (root / "solutions" / lab).write_text(_notebook(lab, solved=True))
    return root


def _argv(klass: Path, *extra: str) -> list[str]:
    course = _instructor(klass.parent / "instructor")
    argv = [sys.executable, "-m", "eoslab.cli", "grade", "--class", str(klass), "--course", str(course)]
    return [*argv, "--cell-timeout", "60", *extra]


def _grade(klass: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(_argv(klass, *extra), capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def _rows(klass: Path) -> list[dict[str, str]]:
    with (klass / "gradebook.csv").open() as fh:
        return list(csv.DictReader(fh))


def _by(rows: list[dict[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
    return {(r["learner"], r["notebook"]): r for r in rows}


def _tally(path: Path) -> list[tuple[str, str, float]]:
    if not path.is_file():
        return []
    return [(w, what, float(t)) for w, what, t in (line.split() for line in path.read_text().splitlines())]


def test_archives_and_folders_are_graded_together_by_the_instructors_rerun(tmp_path: Path) -> None:
    klass = tmp_path / "class"
    klass.mkdir()
    course = _course(tmp_path / "ana", {"lab04_a.ipynb": True, "lab99_b.ipynb": False})
    submit = [sys.executable, "-m", "eoslab.cli", "submit", "--name", "Ana María", "--course", str(course)]
    proc = subprocess.run([*submit, "--out", str(klass)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "hand in this one file" in proc.stdout, proc.stderr
    (klass / "bo").mkdir()  # a folder, assembled by hand as before
    (klass / "bo" / "lab04_a.ipynb").write_text(_notebook("lab04_a.ipynb", solved=True))
    cy = write_submission(_course(tmp_path / "cy", {"lab04_a.ipynb": False}), learner="cy", dest=tmp_path)
    _swap(cy.path, klass / cy.path.name, "labs/lab04_a.ipynb", _notebook("lab04_a.ipynb", solved=True))
    (klass / "notes.zip").write_bytes(b"not an archive")

    out = _grade(klass, "--workers", "2", "--one-cluster").stdout

    rows = _by(_rows(klass))
    assert sorted(rows) == [
        ("Ana María", "lab04_a.ipynb"),
        ("Ana María", "lab99_b.ipynb"),
        ("bo", "lab04_a.ipynb"),
        ("cy", "lab04_a.ipynb"),
        ("notes.zip", ""),
    ]
    assert [rows[k]["score"] for k in sorted(rows)[:4]] == ["2.0", "0.0", "2.0", "2.0"]
    assert {rows[k]["graded by"] for k in sorted(rows)[:4]} == {"instructor rerun"}
    assert rows[("Ana María", "lab04_a.ipynb")]["manifest"] == "ok"
    assert rows[("bo", "lab04_a.ipynb")]["manifest"] == "folder (no manifest)"
    assert "differs from its manifest sha256" in rows[("cy", "lab04_a.ipynb")]["manifest"]
    assert "notes.zip is not a readable submission" in rows[("notes.zip", "")]["error"]
    assert "cy: archive submission-cy-" in out and "does not match its manifest" in out
    assert "graded 4 notebooks now, 0 kept" in out
    _the_lms_and_the_learners_get_the_rerun(klass)


def _the_lms_and_the_learners_get_the_rerun(klass: Path) -> None:
    """The same run's CSV, read as Canvas's importer reads it, and its feedback files (tests/formats.py)."""
    canvas = read_canvas_gradebook(klass / LMS_CSV)
    assert (canvas.assignments, canvas.points_possible) == (["lab04_a", "lab99_b"], {"lab04_a": "3", "lab99_b": "3"})
    solved = {"lab04_a": "2", "lab99_b": "0"}  # t1 right (2 points), t2 always fails
    assert canvas.students == {"Ana María": solved, "bo": solved, "cy": solved}  # notes.zip names no learner
    index = json.loads((klass / FEEDBACK / "index.json").read_text())
    ana = (klass / FEEDBACK / index["Ana María"]).read_text(encoding="utf-8")
    assert "**Total: 2 / 6 points.**" in ana and "## lab99_b: 0 / 3 points" in ana
    assert "| t1 | the answer | 2 / 2 | the answer is right |" in ana  # each task's message from the rerun
    assert "| t2 | always fails | 0 / 1 | saw nothing; expected something. Hint: this task always fails |" in ana, ana


def _swap(src: Path, dest: Path, name: str, text: str) -> None:
    """``src`` with member ``name`` replaced after `eoslab submit` wrote it (its manifest untouched)."""
    import zipfile

    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, text if info.filename == name else zin.read(info))


def test_a_report_edited_with_its_notebook_is_shown_not_counted(tmp_path: Path) -> None:
    """dee hands in an unsolved lab and a report that claims every point, its sha256 that of the notebook
    beside it (both edited together: a sha256 check passes). The rerun's 0 is her grade."""
    course = _course(tmp_path / "dee", {"lab99_b.ipynb": False})
    nb = course / "labs" / "lab99_b.ipynb"
    tasks = [{"task": "t1", "title": "", "points": 2.0, "max_points": 2.0, "passed": True, "message": "ok"}]
    tasks.append({"task": "t2", "title": "", "points": 1.0, "max_points": 1.0, "passed": True, "message": "ok"})
    claim = {"notebook": nb.name, "sha256": hashlib.sha256(nb.read_bytes()).hexdigest(), "score": 3.0}
    claim |= {"max_score": 3.0, "graded_at": "then", "kit_version": "0.1.0", "tasks": tasks}
    nb.with_suffix(".report.json").write_text(json.dumps(claim))
    klass = tmp_path / "class"
    klass.mkdir()
    write_submission(course, learner="dee", dest=klass)

    out = _grade(klass).stdout
    dee = _by(_rows(klass))[("dee", "lab99_b.ipynb")]
    assert (dee["score"], dee["self-reported"], dee["report check"]) == ("0.0", "3.0", "ok")
    assert "lab99_b.ipynb: mean 0.0 / 3 over 1 learners" in out
    assert "dee: lab99_b.ipynb self-reported 3 but the rerun gives 0" in out

    untrusted = _grade(klass, "--no-rerun").stdout
    assert untrusted.startswith("SELF-REPORTED GRADES, UNTRUSTED (--no-rerun)")
    dee = _by(_rows(klass))[("dee", "lab99_b.ipynb")]
    assert (dee["score"], dee["graded by"]) == ("3.0", "self-reported (untrusted)")


def _grading_processes(tally: Path) -> list[psutil.Process]:
    """Processes of a class run (the command, its workers, pytest, the kernels): they carry its tally."""
    found = []
    for p in psutil.process_iter():
        try:
            if p.environ().get(TALLY) == str(tally) and p.status() != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            pass
    return found


@pytest.mark.parametrize("sig,workers", [(signal.SIGINT, 1), (signal.SIGKILL, 2)], ids=["ctrl-c", "sigkill"])
def test_a_class_run_killed_halfway_resumes_without_regrading(tmp_path: Path, sig: int, workers: int) -> None:
    labs = {"lab04_a.ipynb": True, "lab99_b.ipynb": False}
    klass = _class(tmp_path, {who: labs for who in ("ana", "bo", "cy")})
    everything = {(who, lab) for who in ("ana", "bo", "cy") for lab in labs}
    tally = tmp_path / "tally.txt"
    env = {**os.environ, TALLY: str(tally), SLEEP: "2"}
    argv = _argv(klass, "--workers", str(workers), "--one-cluster")
    proc = subprocess.Popen(
        argv,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal delivers it: a run started with `&` without job control (as `make test` may be)
        # inherits SIGINT ignored, and the class run would then never see the interrupt this test sends
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    journal = klass / "gradebook.jsonl"
    deadline = time.monotonic() + 300
    while not journal.is_file() or len(journal.read_text().splitlines()) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL), err
    if sig == signal.SIGINT:
        assert err.startswith("eoslab: interrupted; every notebook graded so far is kept in "), err
    deadline = time.monotonic() + 30
    while _grading_processes(tally):  # the killed run's workers end its notebooks (Ctrl-C, or parent gone)
        assert time.monotonic() < deadline, [p.cmdline()[:4] for p in _grading_processes(tally)]
        time.sleep(0.2)
    lines = [(r["learner"], r["notebook"]) for r in map(json.loads, journal.read_text().splitlines())]
    done = set(lines)
    assert 2 <= len(done) < len(everything)
    book = {(r["learner"], r["notebook"]) for r in _rows(klass)}
    if sig == signal.SIGINT:  # the gradebook, as it was going: rewritten from the journal however the run stops
        assert book == done
    else:  # SIGKILL can land between a journal line (fsynced) and the gradebook's rewrite after it (seen once in
        # ~20 fresh-clone runs): the gradebook, a view of the journal, then lacks that last line's notebook until
        # the next run rewrites it from the journal (the resumed run's whole gradebook is asserted below)
        assert book <= done and done - book <= {lines[-1]}, (book, lines)
    before = len(_tally(tally))

    out = _grade(klass, "--workers", str(workers), "--one-cluster", env=env).stdout

    regraded = [tuple(who.split("/")) for who, what, _ in _tally(tally)[before:] if what == "start"]
    assert sorted(regraded) == sorted(everything - done)  # each missing one once; nothing done twice
    assert f"graded {len(everything) - len(done)} notebooks now, {len(done)} kept" in out
    rows = _by(_rows(klass))
    assert sorted(rows) == sorted(everything)
    assert {k: r["score"] for k, r in rows.items()} == {k: "2.0" if "lab04" in k[1] else "0.0" for k in everything}


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@pytest.mark.timeout(600)  # as its sibling below: 86-186 s on the Intel machine of this kind, CI 1.5x slower
def test_two_workers_on_one_cluster_give_the_gradebook_one_gives_and_labs_that_run_alone_never_overlap(
    tmp_path: Path,
) -> None:
    learners = {
        "ana": {"lab04_a.ipynb": True, "lab99_b.ipynb": True},
        "bo": {"lab04_a.ipynb": False},
        "cy": {"lab04_a.ipynb": True, "lab99_b.ipynb": False},
        "dee": {"lab04_a.ipynb": False},
    }
    one = _class(tmp_path / "one", learners)
    two = tmp_path / "two"
    shutil.copytree(one, two)  # the very same archives
    tally = tmp_path / "tally.txt"
    _grade(one, "--workers", "1")
    meet = sum("lab04_a.ipynb" in labs for labs in learners.values())
    _grade(two, "--workers", "2", "--one-cluster", env={**os.environ, TALLY: str(tally), SLEEP: "4", MEET: str(meet)})

    def comparable(klass: Path) -> list[list[tuple[str, str]]]:
        return sorted(sorted((k, v) for k, v in r.items() if k != "graded_at") for r in _rows(klass))

    assert comparable(one) == comparable(two) and len(_rows(two)) == 6
    marks = _tally(tally)
    spans = {w: (t, next(t2 for w2, e, t2 in marks if w2 == w and e == "end")) for w, e, t in marks if e == "start"}
    shared = [s for w, s in spans.items() if "lab04" in w]
    alone = [s for w, s in spans.items() if "lab99" in w]
    assert any(_overlap(a, b) for i, a in enumerate(shared) for b in shared[i + 1 :]), spans  # two at once
    assert not any(_overlap(a, b) for a in alone for b in spans.values() if b != a), spans


def _cluster_processes(data: Path) -> list[str]:
    """Processes of the cluster whose data folder is ``data``: its JVMs name their properties file there."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        cmdline = p.info["cmdline"] or []
        if any(str(data) + os.sep in arg for arg in cmdline):
            found.append(" ".join(cmdline)[:120])
    return found


@pytest.mark.timeout(600)
def test_two_workers_on_clusters_of_their_own_grade_as_one_and_stop_the_cluster_of_the_run(
    cluster, tmp_path: Path
) -> None:
    """Two learners hand in lab 04's solution (a real lab: its Setup cell heals the cluster it is given).

    Slot 1 (ports +2500, data + ``-grade1``) is started by the very command the run gives it (``eoslab up``
    with the slot's environment), only earlier, while the 1-worker run grades: the run's own ``up`` then finds
    it running (as it finds a killed run's), and bo's notebook goes to slot 1 while ana's is graded on slot 0.
    The cold start by the run and its Ctrl-C are the unit tests' (a stand-in for up and down) and `eoslab bench
    grading`'s."""
    solution = ROOT / "solutions" / "lab04_read_committed.ipynb"
    one = tmp_path / "one"
    for who in ("ana", "bo"):
        (one / who).mkdir(parents=True)
        shutil.copy(solution, one / who / solution.name)
    two = tmp_path / "two"
    shutil.copytree(one, two)
    slot1 = {**os.environ, **slot_env(1, os.environ)}
    data = Path(slot1["EOSLAB_DATA"])
    fresh = not data.exists()
    argv = [sys.executable, "-m", "eoslab.cli", "grade", "--course", str(ROOT), "--class"]
    up = subprocess.Popen(
        [sys.executable, "-m", "eoslab.cli", "up"],
        env=slot1,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        first = subprocess.run([*argv, str(one), "--workers", "1"], capture_output=True, text=True, timeout=400)
        assert first.returncode == 0, first.stderr
        assert up.wait(timeout=240) == 0, up.stdout.read() if up.stdout else ""
        second = subprocess.run([*argv, str(two), "--workers", "2"], capture_output=True, text=True, timeout=400)
        assert second.returncode == 0, second.stderr

        def comparable(klass: Path) -> list[list[tuple[str, str]]]:
            return sorted(sorted((k, v) for k, v in r.items() if k != "graded_at") for r in _rows(klass))

        assert comparable(one) == comparable(two) and [r["score"] for r in _rows(two)] == ["6.0", "6.0"]
        slots = {r["learner"]: r["slot"] for r in map(json.loads, (two / "gradebook.jsonl").read_text().splitlines())}
        assert slots == {"ana": 0, "bo": 1}, second.stdout
        assert "grading clusters started beside yours (and stopped): 1 in " in second.stdout
        assert not slot_runs(data) and not _cluster_processes(data), _cluster_processes(data)
        assert cluster.is_up()  # the instructor's, slot 0: never stopped
    finally:  # whatever failed, nothing of slot 1 is left running
        if up.poll() is None:
            up.send_signal(signal.SIGINT)
            up.wait(timeout=60)
        subprocess.run([sys.executable, "-m", "eoslab.cli", "down"], env=slot1, capture_output=True, timeout=120)
        if fresh:
            shutil.rmtree(data, ignore_errors=True)
