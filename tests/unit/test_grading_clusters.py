"""`eoslab grade --class --workers N` on N clusters, without a cluster: the slots' ports and folders, which job
goes to which slot, the clusters started and stopped (a stand-in for ``eoslab up``/``down`` that writes and
removes pid files as they do), and the slot's environment reaching the grader's subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from _classroom import FakeNbval, instructor_course, notebook, quiet

from eoslab import cli
from eoslab.classroom import _class_grades, _rerun, grade_class
from eoslab.classroom._clusters import GradingClusters, check_machine, most_workers, slot_env
from eoslab.classroom._rerun import (
    Job,
    _next,
    grade_job,
    machine_alone,
    order_own,
    pick,
    pick_slots,
    slots_wanted,
)
from eoslab.errors import GradingError
from eoslab.labcheck import _report

# -- the slots' ports and folders ---------------------------------------------------------------------------


def test_slot_0_is_the_instructors_cluster_and_slot_k_is_2000_plus_500k_above_it(tmp_path: Path) -> None:
    environ = {"EOSLAB_PORT_OFFSET": "100", "EOSLAB_DATA": str(tmp_path / "kd")}
    assert slot_env(0, environ) == {}
    assert slot_env(1, environ) == {"EOSLAB_PORT_OFFSET": "2600", "EOSLAB_DATA": str(tmp_path / "kd-grade1")}
    assert slot_env(2, environ) == {"EOSLAB_PORT_OFFSET": "3100", "EOSLAB_DATA": str(tmp_path / "kd-grade2")}
    assert slot_env(1, {"EOSLAB_DATA": str(tmp_path / "kd")})["EOSLAB_PORT_OFFSET"] == "2500"  # no offset: 0


def test_a_bad_offset_or_ports_among_the_ephemeral_ones_are_refused_in_one_sentence(tmp_path: Path) -> None:
    environ = {"EOSLAB_DATA": str(tmp_path / "kd")}
    with pytest.raises(GradingError, match=r"^EOSLAB_PORT_OFFSET='x' is not a number: set it to e\.g\. 1000"):
        slot_env(1, {**environ, "EOSLAB_PORT_OFFSET": "x"})
    assert most_workers(0) == 23  # slot 22's proxy control port: 19400 + 2000 + 11000 = 32400 < 32768
    slot_env(22, environ)
    with pytest.raises(GradingError) as exc:
        slot_env(23, environ)
    assert str(exc.value) == (
        "--workers 24: grading cluster 23 would listen on ports up to 32900, among the ephemeral ports (32768 and "
        "up) that outgoing connections take: give --workers 23 at most."
    )
    calls: list[Any] = []
    with pytest.raises(GradingError, match="give --workers 23 at most"):
        GradingClusters(24, popen=lambda *a, **k: calls.append(a), environ=environ)
    assert calls == []  # refused before anything started


def test_memory_for_the_clusters_is_checked_and_more_clusters_than_cores_is_a_warning() -> None:
    assert check_machine(2, 8e9, 2) is None
    warning = check_machine(3, 32e9, 2)
    assert warning is not None and warning.startswith("--workers 3 on 2 cores:") and "--workers 2 or fewer" in warning
    with pytest.raises(GradingError) as exc:
        check_machine(4, 8e9, 8)
    assert str(exc.value) == (
        "--workers 4 starts 3 more clusters, about 11.4 GB with their notebooks, and 8.0 GB is free: give "
        "--workers 3 or fewer, or --one-cluster."
    )


# -- which job goes to which slot ---------------------------------------------------------------------------


def _job(name: str, runs: Path | None = Path("runs"), learner: str = "x") -> Job:
    return Job(learner, Path(name), "s", runs, _rerun.runs_alone(name, runs))


def test_labs_that_run_alone_on_one_cluster_run_side_by_side_on_clusters_of_their_own() -> None:
    l1, l2, l3, l5 = _job("lab01_a.ipynb"), _job("lab02_a.ipynb"), _job("lab03_a.ipynb"), _job("lab05_a.ipynb")
    assert all(j.alone for j in (l1, l2, l3, l5))
    assert pick_slots([l1, l2, l3, l5], {}, {0, 1, 2}) == [(l1, 0), (l2, 1), (l3, 2)]
    assert pick_slots([l3, l5], {0: l1, 2: l2}, {0, 1, 2}) == [(l3, 1)]  # never two jobs on one slot
    assert pick_slots([l3], {0: l1, 1: l2}, {0, 1}) == []
    assert pick_slots([l2, l3], {}, {0}) == [(l2, 0)]  # slots 1 and 2 not ready yet: not used
    assert pick_slots([], {}, {0, 1}) == []


def test_lab06_without_runs_has_the_machine_to_itself() -> None:
    bench, l4, l6 = _job("lab06_c.ipynb", runs=None), _job("lab04_b.ipynb"), _job("lab06_c.ipynb")
    assert machine_alone(bench) and not machine_alone(l6) and not machine_alone(l4)
    assert pick_slots([bench, l4], {0: l6}, {0, 1}) == []  # the machine must drain first; l4 waits behind it
    assert pick_slots([bench, l4], {}, {0, 1}) == [(bench, 0)]
    assert pick_slots([l4, bench, l6], {}, {0, 1, 2}) == [(l4, 0)]
    assert pick_slots([l4, l6], {1: bench}, {0, 1, 2}) == []
    assert pick_slots([l4, l6], {}, {0, 1, 2}) == [(l4, 0), (l6, 1)]  # lab 06 on runs: beside anything


def test_one_spark_session_at_a_time_and_another_lab_takes_its_slot_meanwhile() -> None:
    s1, s2 = _job("lab06_a.ipynb", learner="ana"), _job("lab06_a.ipynb", learner="bo")
    l3, l5 = _job("lab03_a.ipynb"), _job("lab05_a.ipynb")
    assert _rerun.uses_spark(s1) and not _rerun.uses_spark(_job("lab06_a.ipynb", runs=None))
    assert pick_slots([s1, s2, l3], {}, {0, 1}, spark_at_once=1) == [(s1, 0), (l3, 1)]
    assert pick_slots([s2, l5], {0: s1}, {0, 1}, spark_at_once=1) == [(l5, 1)]  # s2 waits, not l5 behind it
    assert pick_slots([s2], {0: s1}, {0, 1}, spark_at_once=1) == []
    assert pick_slots([s2, l5], {0: l3}, {0, 1}, spark_at_once=1) == [(s2, 1)]  # once s1 is done
    assert pick_slots([s1, s2], {}, {0, 1, 2}, spark_at_once=2) == [(s1, 0), (s2, 1)]  # 8 cores: two at once
    l4 = _job("lab04_a.ipynb")
    assert pick([s1, s2, l4], [], 3, spark_at_once=1) == [s1, l4]  # one cluster: the same rule
    assert pick([s2, l4], [s1], 3, spark_at_once=1) == [l4]


def test_on_clusters_of_their_own_the_machine_alone_go_first_then_the_longest_labs() -> None:
    jobs = [
        _job("lab04_b.ipynb", learner="ana"),
        _job("lab01_a.ipynb", learner="ana"),
        _job("lab02_c.ipynb", learner="bo"),
        _job("lab06_d.ipynb", runs=None, learner="bo"),
        _job("lab99_z.ipynb", learner="ana"),
        _job("lab05_e.ipynb", learner="ana"),
    ]
    got = [(j.learner, j.notebook.name) for j in order_own(jobs)]
    assert got == [
        ("bo", "lab06_d.ipynb"),
        ("ana", "lab99_z.ipynb"),  # unknown: as the longest
        ("ana", "lab05_e.ipynb"),
        ("ana", "lab04_b.ipynb"),
        ("ana", "lab01_a.ipynb"),
        ("bo", "lab02_c.ipynb"),
    ]
    assert slots_wanted(jobs) == 5 and slots_wanted([jobs[3], _job("lab06_x.ipynb", runs=None)]) == 1
    assert slots_wanted([]) == 0


class _Slots:
    def __init__(self, ready: set[int]) -> None:
        self._ready = ready

    def ready(self) -> set[int]:
        return set(self._ready)

    def env(self, k: int) -> dict[str, str]:
        return {"EOSLAB_PORT_OFFSET": str(2500 + 500 * (k - 1))} if k else {}


def test_the_pool_schedules_by_slot_with_clusters_and_as_before_without() -> None:
    l1, l2, l4 = _job("lab01_a.ipynb"), _job("lab02_a.ipynb"), _job("lab04_b.ipynb")
    assert _next([l1, l2], {"f0": (l4, 0)}, 3, _Slots({0, 1})) == [(l1, 1)]
    assert _next([l1, l2], {}, 3, _Slots({0, 1, 2})) == [(l1, 0), (l2, 1)]
    assert _next([l4, l1], {"f0": (l4, 0)}, 3, None) == [(l4, 0)]  # one cluster: l1 runs alone, after
    assert _next([l1], {"f0": (l4, 0)}, 3, None) == []


# -- the clusters started and stopped ------------------------------------------------------------------------


class _Proc:
    """``eoslab up`` or ``down`` for one slot: up writes a node's pid file (a live pid: this test's) when it
    succeeds or while in flight, and removes it when interrupted (``Cluster.up`` stops what it started)."""

    def __init__(self, events: list[str], what: str, data: Path, outcome: str, out: Any) -> None:
        self.events, self.what, self.data, self.outcome = events, what, data, outcome
        self.pid = 999_999_999
        self.code: int | None = None
        pid = data / "broker-1" / "pid"
        if what == "up" and outcome in ("ok", "slow"):
            pid.parent.mkdir(parents=True, exist_ok=True)
            pid.write_text(f"{os.getpid()}\n")
        if what == "up" and outcome == "ok":
            self.code = 0
        if what == "up" and outcome == "fail":
            out.write(b"Starting ...\neoslab: port 21592 (broker-1 client) is in use by another process.\n")
            self.code = 1
        if what == "down":
            pid.unlink(missing_ok=True)
            self.code = 0

    def poll(self) -> int | None:
        return self.code

    def wait(self, timeout: float | None = None) -> int:
        if self.code is None:
            raise subprocess.TimeoutExpired(self.what, timeout or 0)
        return self.code

    def send_signal(self, sig: int) -> None:
        self.events.append(f"SIGINT {self.what} {self.data.name}")
        (self.data / "broker-1" / "pid").unlink(missing_ok=True)
        self.code = 130


class _Popen:
    def __init__(self, outcomes: dict[str, str]) -> None:
        self.outcomes = outcomes
        self.events: list[str] = []
        self.envs: list[dict[str, str]] = []
        self.sigint_while_down: list[Any] = []

    def __call__(self, argv: list[str], *, env: dict[str, str], stdout: Any, **kw: Any) -> _Proc:
        assert argv[1:4] == ["-m", "eoslab.cli", argv[3]] and kw["start_new_session"] is True
        what, data = argv[3], Path(env["EOSLAB_DATA"])
        self.events.append(f"{what} {data.name} +{env['EOSLAB_PORT_OFFSET']}")
        self.envs.append(env)
        if what == "down":
            self.sigint_while_down.append(signal.getsignal(signal.SIGINT))
        return _Proc(self.events, what, data, self.outcomes.get(data.name, "ok"), stdout)


def _environ(tmp_path: Path) -> dict[str, str]:
    return {"EOSLAB_PORT_OFFSET": "100", "EOSLAB_DATA": str(tmp_path / "kd"), "KEEP": "me"}


def test_slots_start_only_as_many_as_the_notebooks_left_can_use(tmp_path: Path) -> None:
    popen = _Popen({})
    with GradingClusters(3, popen=popen, environ=_environ(tmp_path), say=quiet) as slots:
        slots.start(1)
        slots.start(0)
        assert slots.ready() == {0}
    assert popen.events == []
    with GradingClusters(3, popen=popen, environ=_environ(tmp_path), say=quiet) as slots:
        slots.start(2)
        assert slots.ready() == {0, 1} and slots.env(1)["EOSLAB_PORT_OFFSET"] == "2600" and slots.env(0) == {}
    assert popen.events == ["up kd-grade1 +2600", "down kd-grade1 +2600"]
    assert popen.envs[0]["KEEP"] == "me"  # the rest of the environment is the run's


def test_a_slot_that_fails_to_start_is_a_note_and_the_others_grade_on(tmp_path: Path) -> None:
    popen = _Popen({"kd-grade1": "fail"})
    said: list[str] = []
    with GradingClusters(3, popen=popen, environ=_environ(tmp_path), say=said.append) as slots:
        slots.start(5)
        assert slots.ready() == {0, 2}
    assert slots.notes == [
        "grading cluster 1 (ports +2500) did not start (eoslab: port 21592 (broker-1 client) is in use by another "
        "process.): the class was graded on the other clusters."
    ]
    assert popen.events == ["up kd-grade1 +2600", "up kd-grade2 +3100", "down kd-grade2 +3100"]
    assert said[0].startswith("starting 2 grading cluster(s) beside yours, ports +2500, +3000; each is stopped")
    assert f"EOSLAB_PORT_OFFSET=2600 EOSLAB_DATA={tmp_path / 'kd-grade1'} eoslab down" in said[0]
    assert slots.starts.keys() == {2}


def test_ctrl_c_interrupts_the_starts_in_flight_then_stops_every_slot_that_runs_never_slot_0(tmp_path: Path) -> None:
    orphan = tmp_path / "kd-grade5" / "broker-2"  # a killed run's cluster, still running: stopped too
    orphan.mkdir(parents=True)
    (orphan / "pid").write_text(f"{os.getpid()}\n")
    (tmp_path / "kd-grade7").mkdir()  # a folder whose cluster is down: left alone
    (tmp_path / "kd" / "broker-1").mkdir(parents=True)
    (tmp_path / "kd" / "broker-1" / "pid").write_text(f"{os.getpid()}\n")  # slot 0 runs: never stopped
    popen = _Popen({"kd-grade2": "slow"})
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt), GradingClusters(3, popen=popen, environ=_environ(tmp_path), say=quiet) as s:
        s.start(3)
        assert s.ready() == {0, 1}
        raise KeyboardInterrupt
    assert popen.events == [
        "up kd-grade1 +2600",
        "up kd-grade2 +3100",
        "SIGINT up kd-grade2",
        "down kd-grade1 +2600",
        "down kd-grade5 +4600",
    ]
    assert popen.sigint_while_down == [signal.SIG_IGN, signal.SIG_IGN]  # a second Ctrl-C cannot cut teardown short
    assert signal.getsignal(signal.SIGINT) is before
    assert (tmp_path / "kd" / "broker-1" / "pid").is_file()


def test_a_running_orphan_slot_is_reused_and_stopped_at_the_end(tmp_path: Path) -> None:
    popen = _Popen({})
    node = tmp_path / "kd-grade1" / "controller-1"
    node.mkdir(parents=True)
    (node / "pid").write_text(f"{os.getpid()}\n")
    with GradingClusters(2, popen=popen, environ=_environ(tmp_path), say=quiet) as slots:
        slots.start(2)  # `eoslab up` on a running cluster is a no-op
        assert slots.ready() == {0, 1}
    assert popen.events == ["up kd-grade1 +2600", "down kd-grade1 +2600"]


# -- the slot's environment reaches the grader ----------------------------------------------------------------


def test_grade_job_passes_the_slots_env_to_nbval_and_leaves_its_own_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool's worker imported eoslab with the instructor's offset: only the subprocess may see the slot's."""
    course = instructor_course(tmp_path / "instructor")
    nb = tmp_path / "work" / "ana" / "labs" / "lab01_a.ipynb"
    nb.parent.mkdir(parents=True)
    nb.write_text(notebook(42))
    seen: list[dict[str, str]] = []

    class Done:
        pid = 4_000_000

        def __init__(self, cmd: list[str], *, env: dict[str, str], **kw: Any) -> None:
            seen.append(env)

        def communicate(self, timeout: float | None = None) -> tuple[bytes, bytes]:
            return b"", b""

    monkeypatch.setattr(
        _report, "subprocess", SimpleNamespace(Popen=Done, PIPE=-1, STDOUT=-2, TimeoutExpired=subprocess.TimeoutExpired)
    )
    monkeypatch.setenv("EOSLAB_PORT_OFFSET", "100")
    env = {"EOSLAB_PORT_OFFSET": "2600", "EOSLAB_DATA": "/data-grade1"}
    row = grade_job(Job.of("ana", nb, None, course), 60.0, 30, env)
    assert (seen[0]["EOSLAB_PORT_OFFSET"], seen[0]["EOSLAB_DATA"]) == ("2600", "/data-grade1")
    assert os.environ["EOSLAB_PORT_OFFSET"] == "100" and row["score"] == 0  # nothing ran: no verdict
    grade_job(Job.of("ana", nb, None, course), 60.0, 30)
    assert seen[1]["EOSLAB_PORT_OFFSET"] == "100"  # slot 0, one cluster: the instructor's


# -- grade_class and the command line ------------------------------------------------------------------------


class _FakeClusters:
    made: list[_FakeClusters] = []

    def __init__(self, n: int, *, say: Any) -> None:
        self.n, self.wanted, self.stopped = n, -1, False
        self.notes = ["grading cluster 2 (ports +3000) did not start (x): the class was graded on the other clusters."]
        self.starts = {1: 21.5}
        _FakeClusters.made.append(self)

    def __enter__(self) -> _FakeClusters:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped = True

    def start(self, wanted: int) -> None:
        self.wanted = wanted


def test_grade_class_grades_on_clusters_of_their_own_with_two_workers_or_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instructor = instructor_course(tmp_path / "instructor")
    klass = tmp_path / "class"
    for who in ("ana", "bo"):
        (klass / who).mkdir(parents=True)
        for lab in ("lab01_a.ipynb", "lab04_b.ipynb"):
            (klass / who / lab).write_text(notebook(42))
    pools: list[tuple[list[str], int, Any]] = []

    def pool(jobs: list[Job], workers: int, grade: Any, done: Any, slots: Any = None) -> None:
        pools.append(([f"{j.learner}/{j.notebook.name}" for j in jobs], workers, slots))
        for j in jobs:
            done(j, _rerun.result_row(j, FakeNbval()(j.notebook, timeout=1, cell_timeout=1, write=False)))

    monkeypatch.setattr(_class_grades, "run_pool", pool)
    monkeypatch.setattr(_class_grades, "GradingClusters", _FakeClusters)
    monkeypatch.setattr(_class_grades, "check_machine", lambda n, mem, cores: None)
    _FakeClusters.made = []
    book = grade_class(klass, course=instructor, workers=3, progress=quiet)
    slots = _FakeClusters.made[0]
    assert (slots.n, slots.wanted, slots.stopped, pools[0][1], pools[0][2]) == (3, 3, True, 3, slots)
    assert pools[0][0] == [
        "ana/lab04_b.ipynb",
        "bo/lab04_b.ipynb",
        "ana/lab01_a.ipynb",
        "bo/lab01_a.ipynb",
    ]  # longest first
    assert "  grading cluster 2 (ports +3000) did not start (x)" in book.text and book.cluster_starts == {1: 21.5}

    for kw in ({"workers": 2, "clusters": "one"}, {"workers": 1}, {"workers": 2, "backend": "docker"}):
        (klass / "gradebook.jsonl").unlink()
        book = grade_class(klass, course=instructor, progress=quiet, **kw)
        assert pools[-1][2] is None and len(_FakeClusters.made) == 1, kw  # all on the instructor's cluster
    assert "EOSLAB_BACKEND=docker: every worker graded on your one cluster" in book.text
    with pytest.raises(GradingError, match=r"clusters='two': give one of own, one\."):
        grade_class(klass, course=instructor, clusters="two")


def test_the_command_line_grades_on_clusters_of_their_own_unless_one_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from eoslab import classroom

    got: list[dict[str, Any]] = []

    def fake(root: Path, **kw: Any) -> Any:
        got.append(kw)
        return _class_grades.ClassGrades(
            [], root / "gradebook.csv", "text", 2, 0, [], {1: 30.4} if kw["workers"] else {}
        )

    monkeypatch.setattr(classroom, "grade_class", fake)
    assert cli.main(["grade", "--class", str(tmp_path), "--workers", "2"]) == 0
    assert cli.main(["--backend", "docker", "grade", "--class", str(tmp_path), "--workers", "3", "--one-cluster"]) == 0
    assert [(k["workers"], k["clusters"], k["backend"]) for k in got] == [(2, "own", "local"), (3, "one", "docker")]
    assert "grading clusters started beside yours (and stopped): 1 in 30 s" in capsys.readouterr().out
