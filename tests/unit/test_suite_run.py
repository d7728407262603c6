"""`make test`'s orchestration (tests/suite.py) and its port plan (tests/suite_ports.py): the tiers in order, each
on clusters of the suite's own at a base offset checked free, cleaned up however a tier ends, and a learner's
cluster compared before and after (tests/learner_guard.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from eoslab.topology import Topology
from tests import learner_guard, suite, suite_ports


def test_the_suite_never_takes_the_learners_ports_nor_a_port_lent_to_outgoing_connections() -> None:
    learner = set(Topology(port_offset=0).all_ports())
    for base in suite_ports.CANDIDATES:
        planned = suite_ports.ports(base)
        assert not learner & set(planned), base
        assert max(planned) < suite_ports.EPHEMERAL_PORTS, base
        assert (
            len(planned) == len(suite_ports.plan()) * len(learner) + 1
        )  # no two of its own share a port (+ JupyterLab)
        assert 8888 not in planned


def test_the_first_free_candidate_is_taken_and_a_taken_port_or_a_present_project_moves_it() -> None:
    assert suite_ports.choose_base(free=lambda p: True, projects=set()) == 50
    taken = 19091 + 50 + suite_ports.DOCKER_STEP  # broker-1 of the docker cluster at +550
    assert suite_ports.choose_base(free=lambda p: p != taken, projects=set()) == 150
    assert suite_ports.choose_base(free=lambda p: True, projects={"eoslab-550"}) == 150
    why = suite_ports.why_not(50, {"eoslab-550"}, free=lambda p: True)
    assert why is not None and "eoslab-550" in why and "has containers or volumes" in why


def test_a_learner_elsewhere_moves_the_suite_off_their_ports_and_none_free_is_one_sentence() -> None:
    # a learner at +50 holds ports of the windows at +150, +250 and +350 too (their ports 100-300 apart coincide)
    assert suite_ports.choose_base(learner=50, free=lambda p: True, projects=set()) == 450
    with pytest.raises(SystemExit) as stop:
        suite_ports.choose_base(free=lambda p: False, projects=set())
    said = str(stop.value)
    assert said.startswith("make test: no free block of ports") and said.endswith("then run it again.")
    assert "\n" not in said and "+950: port" in said and "+2050: port" in said


def test_the_learners_offset_is_their_shells() -> None:
    assert suite_ports.learner_offset({}) == 0
    assert suite_ports.learner_offset({"EOSLAB_PORT_OFFSET": "1000"}) == 1000
    with pytest.raises(SystemExit, match="EOSLAB_PORT_OFFSET='x' is not a number"):
        suite_ports.learner_offset({"EOSLAB_PORT_OFFSET": "x"})


class Done:
    """A child process that has ended well."""

    def wait(self) -> int:
        return 0

    def poll(self) -> int:
        return 0


class Failed(Done):
    """A child process that has ended with exit code 1."""

    def wait(self) -> int:
        return 1

    def poll(self) -> int:
        return 1


class Recorder:
    """Stands in for subprocess in tests/suite.py: records each command with the offset and backend it ran with."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[str] = []
        self.argvs: list[list[str]] = []
        self.envs: list[dict[str, str]] = []
        self.fail = fail

    def _name(self, argv: list[str], env: dict[str, str]) -> str:
        words = [a for a in argv if not (a.startswith("/") or "=/" in a or a.endswith("=")) or a.endswith(".sh")]
        what = " ".join(words[words.index("-m") + 1 :] if "-m" in words else words)
        if "pytest" in what:
            what = f"pytest {argv[argv.index('-m', 3) + 1]}" + (
                f" -n {argv[argv.index('-n') + 1]}" if "-n" in argv else ""
            )
        return f"{what} @{env['EOSLAB_PORT_OFFSET']}/{env['EOSLAB_BACKEND']}"

    def run(self, argv: list[str], cwd: Any = None, env: Any = None, **_: Any) -> subprocess.CompletedProcess[str]:
        name = self._name(argv, env)
        self.calls.append(name)
        self.argvs.append(list(argv))
        self.envs.append(dict(env))
        if argv[-1] == "stop":  # the runs folder still holds the engine's state when `docker.sh stop` reads it
            assert Path(env["EOSLAB_DOCKER_STATE"]).parent.is_dir()
        return subprocess.CompletedProcess(argv, 1 if self.fail and self.fail in name else 0)

    def popen(self, argv: list[str], cwd: Any = None, env: Any = None, **_: Any) -> Any:
        name = "start " + self._name(argv, env)
        self.calls.append(name)
        self.argvs.append(list(argv))
        self.envs.append(dict(env))
        return Failed() if self.fail and self.fail in name else Done()


def _main(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *argv: str, fail: str | None = None, rec: Recorder | None = None
) -> tuple[int, list[str]]:
    rec = rec or Recorder(fail)
    monkeypatch.setattr("tests.suite.subprocess.run", rec.run)
    monkeypatch.setattr("tests.suite.subprocess.Popen", rec.popen)
    monkeypatch.setattr("tests.suite.suite_ports.choose_base", lambda learner: 150)
    monkeypatch.setattr("tests.suite.learner_guard.snapshot", lambda offset, data: None)
    monkeypatch.setattr("tests.suite.tempfile.mkdtemp", lambda prefix: str(tmp_path / "runs"))
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "lab-image.log").write_text("")
    for var in ("CLUSTER_WORKERS", "COURSE_WORKERS", "TEST_WORKERS", "EOSLAB_COURSE_BACKEND"):
        monkeypatch.delenv(var, raising=False)
    return suite.main(list(argv)), rec.calls


def test_make_test_runs_the_tiers_in_order_each_on_the_suites_own_clusters(monkeypatch, tmp_path) -> None:
    rc, calls = _main(monkeypatch, tmp_path)
    assert rc == 0
    assert [c for c in calls if not c.startswith("start ")] == [
        "pytest unit and not jvm @150/local",  # the unit tier's Spark half runs beside it
        "eoslab.cli up @150/local",  # the cluster tier's gw0 cluster, at the suite's base
        "pytest cluster -n 3 @150/local",
        "eoslab.cli up @650/docker",  # the course tier's docker clusters: +500 from the base
        "pytest course -n 3 @650/docker",
        "pytest system -n 3 @150/local",
        "bash tools/system/docker.sh stop @150/local",
    ]
    started = [c for c in calls if c.startswith("start ")]
    assert started == [  # the clusters of each tier stop side by side; the lab image builds beside the course tier
        "start pytest unit and jvm @150/local",
        "start bash tools/system/prepare.sh docker @150/local",  # Chromium, the engine, the Kafka image
        "start eoslab.cli down @150/local",
        "start tests.worker_clusters down 3 @150/local",
        "start eoslab.cli image ensure --lab @150/local",
        "start eoslab.cli reset @650/docker",
        "start tests.worker_clusters reset 3 @650/docker",
        "start make --no-print-directory site-test @150/local",  # the site from the notebooks the course tier ran
    ]
    # the system set-up beside the cluster tier, after the unit tier; the site beside the system tier
    assert (
        calls.index(started[0])
        < calls.index("pytest unit and not jvm @150/local")
        < calls.index(started[1])
        < calls.index("pytest cluster -n 3 @150/local")
    )
    site = calls.index("start make --no-print-directory site-test @150/local")
    assert calls.index("pytest course -n 3 @650/docker") < site < calls.index("pytest system -n 3 @150/local")
    assert not (tmp_path / "runs").exists()  # the runs folder, with the suite's clusters' data, is gone


def test_the_docker_engine_a_run_starts_is_recorded_in_its_runs_folder_so_a_nested_run_never_stops_it(
    monkeypatch, tmp_path
) -> None:
    # A suite run inside a test (tests/integration/test_beside_a_learner.py) ends with `docker.sh stop`: with one
    # state file for every run it stopped the engine the outer run's `ensure` had started, mid-tier.
    rec = Recorder()
    assert _main(monkeypatch, tmp_path, rec=rec)[0] == 0
    engine = ("tools/system/docker.sh", "tools/system/prepare.sh")  # prepare.sh runs `docker.sh ensure`
    states = {e["EOSLAB_DOCKER_STATE"] for a, e in zip(rec.argvs, rec.envs, strict=True) if set(engine) & set(a)}
    assert states == {str(tmp_path / "runs" / "dockerd.state")}
    monkeypatch.setenv("EOSLAB_DOCKER_STATE", "/var/run/eoslab-dockerd.state")  # the shell's own engine
    other = Recorder()
    assert _main(monkeypatch, tmp_path, "cluster", rec=other)[0] == 0
    stops = [e for a, e in zip(other.argvs, other.envs, strict=True) if a[-1] == "stop"]
    assert [e["EOSLAB_DOCKER_STATE"] for e in stops] == [str(tmp_path / "runs" / "dockerd.state")]


def test_the_course_tier_leaves_the_site_test_to_make_site_test_unless_it_is_named(monkeypatch, tmp_path) -> None:
    def course_argv(*args: str) -> list[str]:
        rec = Recorder()
        assert _main(monkeypatch, tmp_path, "course", *args, rec=rec)[0] == 0
        (argv,) = [a for a in rec.argvs if "pytest" in a and "course" in a]
        return argv

    assert "--ignore=tests/browser/test_site.py" in course_argv()  # run after the tier, on the built site: no skips
    named = course_argv("--", "tests/browser/test_site.py")
    assert "--ignore=tests/browser/test_site.py" not in named and "tests/browser/test_site.py" in named


def test_a_failed_system_set_up_stops_the_course_tier_and_a_failed_site_fails_the_run_after_the_system_tier(
    monkeypatch, tmp_path
) -> None:
    rc, calls = _main(monkeypatch, tmp_path, fail="prepare.sh")
    assert rc == 1 and "pytest cluster -n 3 @150/local" in calls
    assert not any(c.startswith("pytest course") for c in calls)
    rc, calls = _main(monkeypatch, tmp_path, fail="site-test")
    assert rc == 1 and calls.index("pytest system -n 3 @150/local") > calls.index(
        "start make --no-print-directory site-test @150/local"
    )
    rc, calls = _main(monkeypatch, tmp_path, "course", fail="site-test")  # no system tier: the site is the end
    assert rc == 1 and "start bash tools/system/prepare.sh docker @150/local" in calls


def test_a_failing_tier_stops_the_run_and_its_clusters_still_stop(monkeypatch, tmp_path) -> None:
    rc, calls = _main(monkeypatch, tmp_path, fail="pytest cluster")
    assert rc == 1
    assert "pytest course -n 3 @650/docker" not in calls
    assert "start eoslab.cli down @150/local" in calls and calls[-1] == "bash tools/system/docker.sh stop @150/local"


def test_a_cluster_that_does_not_start_fails_its_tier_and_is_stopped(monkeypatch, tmp_path) -> None:
    rc, calls = _main(monkeypatch, tmp_path, "cluster", fail="eoslab.cli up")
    assert rc == 1 and not any(c.startswith("pytest cluster") for c in calls)
    assert "start eoslab.cli down @150/local" in calls


def test_one_tier_alone_and_its_arguments(monkeypatch, tmp_path) -> None:
    rc, calls = _main(monkeypatch, tmp_path, "system", "--", "-k", "image")
    assert rc == 0 and [c for c in calls if c.startswith("pytest")] == ["pytest system -n 3 @150/local"]
    assert "eoslab.cli image ensure --lab @150/local" in calls  # built here when no course tier built it
    with pytest.raises(SystemExit, match="not a tier: units"):
        suite.main(["units"])


def test_a_learners_cluster_that_changed_fails_the_run_naming_what_changed(monkeypatch, tmp_path, capsys) -> None:
    before = learner_guard.Snapshot("local", {"broker-1": ("running", 11)}, frozenset({"orders"}), frozenset({"b/x-0"}))
    after = learner_guard.Snapshot("local", {"broker-1": ("running", 12)}, frozenset({"orders", "mine"}))
    snaps = iter([before, after])
    rec = Recorder()
    monkeypatch.setattr("tests.suite.subprocess.run", rec.run)
    monkeypatch.setattr("tests.suite.subprocess.Popen", rec.popen)
    monkeypatch.setattr("tests.suite.suite_ports.choose_base", lambda learner: 150)
    monkeypatch.setattr("tests.suite.learner_guard.snapshot", lambda offset, data: next(snaps))
    assert suite.main(["unit"]) == 1
    err = capsys.readouterr().err
    assert "broker-1 was running (pid 11), is running (pid 12)" in err and "partition folders gone: b/x-0" in err
    assert "mine" not in err  # a topic the learner made beside the run is theirs to make


def test_what_changed_in_a_learners_cluster() -> None:
    before = learner_guard.Snapshot("docker", {"broker-2": ("running", 5)}, frozenset({"a", "b"}))
    assert learner_guard.changes(before, before) == []
    assert learner_guard.changes(before, None) == ["the docker cluster no longer runs"]
    paused = learner_guard.Snapshot("docker", {"broker-2": ("paused", 5)}, frozenset({"a", "c"}))
    assert learner_guard.changes(before, paused) == [
        "broker-2 was running (pid 5), is paused (pid 5)",
        "topics gone: b",
        "topics added: c",
    ]
    assert learner_guard.changes(before, learner_guard.Snapshot("docker", {}, before.topics)) == ["broker-2 stopped"]


def test_files_named_in_the_arguments_replace_the_whole_suite() -> None:
    whole = suite.pytest_argv("cluster", 3, ["-k", "kill"])
    assert "tests" in whole and "notebooks/05_exactly_once_pipeline.ipynb" in whole and whole[-2:] == ["-k", "kill"]
    named = suite.pytest_argv("cluster", 0, ["tests/integration/test_cluster.py::test_seed_arrangement", "-x"])
    assert "tests" not in named and not any(a.endswith(".ipynb") for a in named) and "-n" not in named
    assert named[-2:] == ["tests/integration/test_cluster.py::test_seed_arrangement", "-x"]


def test_a_kept_runs_folder_keeps_its_measured_runs_and_loses_the_clusters_data(monkeypatch, tmp_path) -> None:
    kept = tmp_path / "kept"
    (kept / "kafka-data" / "broker-1").mkdir(parents=True)
    (kept / "faults-1").mkdir()
    (kept / "lab-image.log").write_text("")
    monkeypatch.setenv("EOSLAB_SUITE_RUNS", str(kept))
    rec = Recorder()
    monkeypatch.setattr("tests.suite.subprocess.run", rec.run)
    monkeypatch.setattr("tests.suite.subprocess.Popen", rec.popen)
    monkeypatch.setattr("tests.suite.suite_ports.choose_base", lambda learner: 150)
    monkeypatch.setattr("tests.suite.learner_guard.snapshot", lambda offset, data: None)
    assert suite.main(["unit"]) == 0
    assert (kept / "faults-1").is_dir() and not (kept / "kafka-data").exists()
    assert rec.calls[:2] == ["start pytest unit and jvm @150/local", "pytest unit and not jvm @150/local"]


def test_the_unit_tiers_spark_half_failing_fails_the_tier_and_its_output_is_shown(
    monkeypatch, tmp_path, capsys
) -> None:
    rc, calls = _main(monkeypatch, tmp_path, "unit", fail="unit and jvm")
    assert rc == 1 and calls[:2] == ["start pytest unit and jvm @150/local", "pytest unit and not jvm @150/local"]
    assert "the unit tier's Spark tests (mark jvm), run beside the others" in capsys.readouterr().out
    rc, calls = _main(monkeypatch, tmp_path, "unit", "--", "tests/unit/test_wait.py")  # a file named: one process
    assert rc == 0 and calls[0] == "pytest unit @150/local"
