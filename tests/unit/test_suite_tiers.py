"""The suite's own plumbing in the root conftest.py: the tier each item belongs to, and which recorded runs a
test session reuses from an earlier tier instead of measuring them again (bench ~1 min, faults ~3 min).
The runs here are written by the kit's own writers, in the states a writer passes through."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Collection
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

from eoslab.bench.faults import plan
from eoslab.runs import COLUMNS, FAULT_COLUMNS, FORMAT, write_faults_run, write_run
from tests.worker_clusters import WORKER_OFFSET_STEP

ROOT = Path(__file__).resolve().parents[2]
RECORDS = 80


def _root_conftest() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eoslab_root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


suite = _root_conftest()


@pytest.mark.parametrize(
    ("path", "marks", "tier"),
    [
        ("tests/unit/test_wait.py", set(), "unit"),
        ("tests/unit/test_spark_session_quiet.py", {"jvm"}, "unit"),
        ("tests/unit/test_lint.py", {"lint"}, "unit"),
        ("tests/integration/test_cluster.py", {"cluster", "destructive"}, "cluster"),
        ("tests/integration/test_grade_run.py", set(), "cluster"),  # a real kernel, no cluster: the kit's behaviour
        ("tests/integration/test_lifecycle.py", {"cluster", "last"}, "cluster"),
        ("tests/integration/test_lab01.py", {"cluster", "destructive"}, "course"),  # `cluster` from before the tiers
        ("tests/integration/test_lab06.py", set(), "course"),
        ("tests/integration/m02/test_lab02.py", {"cluster", "destructive"}, "course"),  # a module's own folder
        ("tests/unit/m02/test_pid_ranges.py", set(), "unit"),
        ("tests/integration/m07/test_production.py", {"cluster"}, "cluster"),  # not a lab: labNN only
        ("tests/integration/test_wrong_answers.py", {"cluster"}, "course"),
        (
            "tests/integration/test_fault_matrix.py",
            {"cluster", "destructive"},
            "course",
        ),  # notebook 05 audits its topics
        ("tests/browser/test_course_in_browser.py", {"browser"}, "course"),
        ("notebooks/01_idempotent_producer.ipynb", set(), "course"),
        ("labs/lab06_cost.ipynb", set(), "course"),  # graded in place by a subprocess of the suite
        ("/tmp/pytest-7/lab01_idempotence.ipynb", set(), "course"),
        ("tests/integration/test_conformance.py", {"cluster", "docker", "destructive"}, "system"),
        ("tests/integration/test_workshop_offline.py", {"workshop"}, "system"),
        ("tests/integration/test_workshop_docker.py", {"docker"}, "system"),
        ("tests/integration/test_docker_image.py", {"docker"}, "system"),  # gw1 may run it: still system
        ("tests/integration/test_beside_a_learner.py", {"learner"}, "system"),
        ("tests/integration/test_labels.py", set(), "cluster"),  # not a lab: labNN only
        ("tools/test_something.py", set(), None),  # no rule: collection stops and says so
        ("tests/test_loose.py", set(), None),
    ],
)
def test_an_items_tier_comes_from_its_path_and_its_docker_or_workshop_mark(
    path: str, marks: set[str], tier: str | None
) -> None:
    assert suite.tier_of(path, marks) == tier


def _env(run_id: str, matrix: str) -> dict[str, Any]:
    env: dict[str, Any] = dict.fromkeys(COLUMNS["env"], "x")
    env.update(run_id=run_id, format=FORMAT, matrix=matrix, rounds=1, seconds=0.0, cores=2, memory_gib=8.0)
    env.update(started_at=pd.Timestamp.now(tz="UTC"), load1_at_start=0.0)
    return env


def _bench_run(root: Path, run_id: str, matrix: str = "quick") -> Path:
    params = [{**dict.fromkeys(COLUMNS["params"], 0), "run_id": run_id, "label": "acks_all", "mode": "acks_all"}]
    summary = [{**dict.fromkeys(COLUMNS["summary"], 0), "run_id": run_id, "label": "acks_all", "phase": "saturation"}]
    samples = pd.DataFrame([{**dict.fromkeys(COLUMNS["samples"], 0), "run_id": run_id, "label": "acks_all"}])
    return write_run(root / run_id, params, summary, samples, _env(run_id, matrix))


def _fault_run(root: Path, run_id: str, records: int = RECORDS, cells: int | None = None) -> Path:
    base = {**dict.fromkeys(FAULT_COLUMNS, 0), "run_id": run_id, "records": records, "notes": ""}
    rows = [{**base, "fault": f, "kind": k, "group_protocol": p} for f, k, p in plan()[:cells]]
    folder = root / f"faults-{run_id}"
    (folder / "histories").mkdir(parents=True)
    return write_faults_run(folder, rows, _env(run_id, "faults"))


def test_no_runs_folder_or_an_empty_one_has_nothing_to_reuse(tmp_path: Path) -> None:
    assert suite.reusable_bench_run(tmp_path / "absent") is None
    assert suite.reusable_fault_run(tmp_path / "absent", RECORDS) is None
    assert suite.reusable_bench_run(tmp_path) is None
    assert suite.reusable_fault_run(tmp_path, RECORDS) is None


def test_a_complete_quick_run_is_reused_beside_a_fault_run(tmp_path: Path) -> None:
    _fault_run(tmp_path, "f1")
    run = _bench_run(tmp_path, "r1")
    assert suite.reusable_bench_run(tmp_path) == run


def test_a_bench_run_being_written_or_of_another_matrix_is_not_reused(tmp_path: Path) -> None:
    _bench_run(tmp_path, "default-run", matrix="default")
    whole = _bench_run(tmp_path, "r2")
    whole.rename(tmp_path / "r2.partial")  # every table written, not yet renamed
    half = _bench_run(tmp_path, "r3")
    (half / "env.parquet").unlink()  # the env table is written last
    half.rename(tmp_path / "r3.partial")
    assert suite.reusable_bench_run(tmp_path) is None
    assert suite.reusable_bench_run(tmp_path, "default") == tmp_path / "default-run"


def test_a_fault_run_being_written_is_not_reused(tmp_path: Path) -> None:
    (tmp_path / "faults-f0" / "histories").mkdir(parents=True)  # the cells are running
    renamed_last = _fault_run(tmp_path, "f1")
    (renamed_last / "faults.parquet").rename(renamed_last / "faults.parquet.partial")
    assert suite.reusable_fault_run(tmp_path, RECORDS) is None


def test_a_fault_run_of_another_size_or_with_cells_missing_is_not_reused(tmp_path: Path) -> None:
    _fault_run(tmp_path, "f1", records=200)
    _fault_run(tmp_path, "f2", cells=len(plan()) - 1)
    assert suite.reusable_fault_run(tmp_path, RECORDS) is None
    assert suite.reusable_fault_run(tmp_path, 200) == tmp_path / "faults-f1"


def test_of_two_fitting_fault_runs_the_newest_is_reused(tmp_path: Path) -> None:
    first, second = _fault_run(tmp_path, "f1"), _fault_run(tmp_path, "f2")
    os.utime(first / "faults.parquet", (2_000_000_000, 2_000_000_000))  # finished after the second
    os.utime(second / "faults.parquet", (1_000_000_000, 1_000_000_000))
    assert suite.reusable_fault_run(tmp_path, RECORDS) == first


# --- Two xdist workers, a cluster each ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodeid", "scope"),
    [
        ("notebooks/05_exactly_once_pipeline.ipynb::Cell 3", "notebooks/05_exactly_once_pipeline.ipynb"),
        ("tests/integration/test_fault_matrix.py::test_x[zombie]", "tests/integration/test_fault_matrix.py"),
        (
            "tests/integration/test_wrong_answers.py::test_w[lab05-t2]",
            "tests/integration/test_wrong_answers.py::test_w[lab05-t2]",
        ),
        ("tests/integration/test_lab05.py::test_solution", "tests/integration/test_lab05.py::test_solution"),
        ("tests/integration/m02/test_lab02.py::test_solution", "tests/integration/m02/test_lab02.py::test_solution"),
        ("tests/integration/test_labels.py::test_l", "tests/integration/test_labels.py"),  # not a lab
        (  # lab 06's rows share the lab's Spark set-up: one worker takes them all
            "tests/integration/test_wrong_answers.py::test_w[lab06-t1-the-mean]",
            "tests/integration/test_wrong_answers.py::lab06",
        ),
        (
            "tests/integration/test_wrong_answers.py::test_the_untouched_lab_refuses_every_check_at_once[lab06]",
            "tests/integration/test_wrong_answers.py::lab06",
        ),
    ],
)
def test_a_worker_takes_a_notebook_or_a_file_whole_and_spread_files_test_by_test(nodeid: str, scope: str) -> None:
    assert suite.xdist_scope(nodeid) == scope


def test_no_spread_file_has_a_fixture_that_a_second_worker_would_set_up_again() -> None:
    spread = [p for p in (ROOT / "tests").rglob("test_*.py") if suite.SPREAD.fullmatch(p.relative_to(ROOT).as_posix())]
    assert len(spread) >= 8, spread  # the labs, the wrong answers, the classroom, ...
    for path in spread:
        text = path.read_text()
        assert not re.search(r"scope=[\"'](module|class|package|session)[\"']", text), path.name


def test_worker_k_gets_ports_and_a_data_folder_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EOSLAB_PORT_OFFSET", "100")
    monkeypatch.setenv("EOSLAB_DATA", str(tmp_path / "kafka-data"))
    monkeypatch.delenv("EOSLAB_TEST_WORKER", raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    suite._worker_cluster_env()
    assert os.environ["EOSLAB_PORT_OFFSET"] == str(100 + WORKER_OFFSET_STEP)
    assert os.environ["EOSLAB_DATA"] == f"{tmp_path / 'kafka-data'}-gw1"
    suite._worker_cluster_env()  # once per process: not shifted twice
    assert os.environ["EOSLAB_PORT_OFFSET"] == str(100 + WORKER_OFFSET_STEP)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.setenv("EOSLAB_PORT_OFFSET", "100")
    monkeypatch.delenv("EOSLAB_TEST_WORKER")
    suite._worker_cluster_env()  # the first worker keeps the session's cluster
    assert os.environ["EOSLAB_PORT_OFFSET"] == "100"


def test_worker_clusters_down_stops_only_the_workers_that_started_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tests.worker_clusters as wc

    calls: list[dict[str, str]] = []
    argvs: list[list[str]] = []

    def run(argv: list[str], env: dict[str, str]) -> Any:
        calls.append(env)
        argvs.append(argv)
        return type("Done", (), {"returncode": 0})()

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setenv("EOSLAB_PORT_OFFSET", "100")
    monkeypatch.setenv("EOSLAB_DATA", str(tmp_path / "kafka-data"))
    (tmp_path / "kafka-data-gw2").mkdir()  # gw1 never started one; gw2 did
    assert wc.down(3) == 0
    assert [(c["EOSLAB_PORT_OFFSET"], c["EOSLAB_DATA"]) for c in calls] == [
        (str(100 + 2 * WORKER_OFFSET_STEP), f"{tmp_path / 'kafka-data'}-gw2")
    ]
    assert argvs == [[sys.executable, "-m", "eoslab.cli", "down"]]
    assert wc.down(3, "reset") == 0  # the course tier's docker clusters: their volumes deleted too
    assert argvs[-1] == [sys.executable, "-m", "eoslab.cli", "reset"]


def test_the_fault_matrix_and_notebook_05_run_on_the_sessions_cluster_first_there() -> None:
    nb05, matrix = "notebooks/05_exactly_once_pipeline.ipynb", "tests/integration/test_fault_matrix.py"
    queue = ["notebooks/03_transactions.ipynb", nb05, "tests/integration/test_cluster.py::test_a", matrix]
    assert suite._next_scope(queue, first=True) == matrix  # gw0 takes what only it may take, the matrix first
    assert suite._next_scope(queue, first=False) == "notebooks/03_transactions.ipynb"
    assert suite._next_scope([nb05, matrix], first=False) is None  # the other worker is then done
    assert (
        suite._next_scope(["tests/integration/test_cluster.py::test_a"], first=True)
        == "tests/integration/test_cluster.py::test_a"
    )
    assert suite._next_scope([], first=True) is None


def test_gw0_runs_the_experiments_tests_before_the_notebooks_that_show_their_kept_runs() -> None:
    nb04, nb05 = "notebooks/04_read_committed.ipynb", "notebooks/05_exactly_once_pipeline.ipynb"
    k17754, rc = "tests/integration/test_kafka17754.py", "tests/integration/test_read_committed.py"
    matrix = "tests/integration/test_fault_matrix.py"
    # xdist's queue: the scopes with the most items first, the notebooks before the test files
    queue = [nb05, nb04, "notebooks/03_transactions.ipynb", rc, k17754, matrix]
    taken = []
    while (scope := suite._next_scope(queue, first=True)) is not None and suite.PINNED.fullmatch(scope):
        taken.append(scope)
        queue.remove(scope)
    assert taken == [matrix, k17754, rc, nb04, nb05]
    assert all(suite.PINNED.fullmatch(s) for s in suite.PINNED_ORDER)


def test_gw0_leaves_the_lab_container_to_the_other_worker_unless_nothing_else_is_left() -> None:
    container, image = "tests/browser/test_course_in_lab_container.py", "tests/integration/test_docker_image.py"
    install, pinned = "tests/integration/test_workshop_offline.py", "tests/integration/test_conformance.py"
    assert suite._next_scope([container, install, image, pinned], first=True) == pinned
    assert suite._next_scope([container, install, image], first=True) == install  # after its pinned ones
    assert suite._next_scope([image, install, container], first=False) == container  # the other worker takes
    # it first, even queued last (xdist queues the scopes with the most tests first: it has one)
    assert suite._next_scope([container], first=True) == container  # one worker (-n 1) still runs it
    assert suite.LEFT_TO_OTHERS.fullmatch(container) and suite.tier_of(container, {"docker", "browser"}) == "system"
    dev, learner = "tests/integration/test_devcontainer.py", "tests/integration/test_beside_a_learner.py"
    assert suite._next_scope([learner, dev, install], first=True) == learner  # gw0 leaves the dev container too
    assert suite._next_scope([learner, dev, install], first=False) == dev


def _asked_for(tree: ast.AST, fixtures: Collection[str]) -> set[str]:
    """Which of ``fixtures`` the code in ``tree`` asks for: as a parameter of a test or a fixture, or as a
    string (``request.getfixturevalue``, ``usefixtures``)."""
    params = {
        a.arg
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        for a in [*f.args.posonlyargs, *f.args.args, *f.args.kwonlyargs]
    }
    strings = {c.value for c in ast.walk(tree) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return set(fixtures) & (params | strings)


def _built_on(fixture: str, conftests: Collection[ast.AST]) -> set[str]:
    """``fixture`` and every function of ``conftests`` that asks for it, or for one of those: a test asking
    for any of them needs ``fixture``."""
    functions = [f for tree in conftests for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)]
    needs = {fixture}
    while more := {f.name for f in functions if _asked_for(f, needs)} - needs:
        needs |= more
    return needs


def _docker_test_files() -> tuple[set[str], set[str]]:
    """The test files that use the docker cluster, and those marked ``docker`` (the unit tier's aside: it runs
    in one process)."""
    conftests = [ast.parse(p.read_text()) for p in [ROOT / "conftest.py", *(ROOT / "tests").rglob("conftest.py")]]
    needs = _built_on("docker_cluster", conftests)
    paths = [p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py")]
    files = {f: (ROOT / f).read_text() for f in paths if not f.startswith("tests/unit/")}
    using = {f for f, text in files.items() if _asked_for(ast.parse(text), needs)}
    return using, {f for f, text in files.items() if re.search(r"mark\.docker\b", text)}


def test_the_files_using_the_docker_cluster_run_on_gw0_and_the_image_only_docker_files_anywhere() -> None:
    """The docker cluster is one session fixture: a test using it on gw1 would start a second one. A docker
    test that needs only the image pinned to gw0 would leave gw1 idle at the tier's end."""
    using, marked = _docker_test_files()
    assert "tests/integration/test_conformance.py" in using  # it asks by name: request.getfixturevalue
    unpinned = sorted(f for f in using if not suite.PINNED.fullmatch(f))
    assert not unpinned, f"these use docker_cluster: add them to PINNED in conftest.py: {unpinned}"
    image_only = marked - using
    assert "tests/integration/test_docker_image.py" in image_only  # the image's contract outside the cluster
    pinned = sorted(f for f in image_only if suite.PINNED.fullmatch(f))
    assert not pinned, f"these need only the docker image: take them out of PINNED in conftest.py: {pinned}"
    assert not suite.PINNED.fullmatch("tests/integration/test_workshop_offline.py")  # either worker's
    queue = ["tests/integration/test_docker_containers.py", "tests/integration/test_docker_image.py"]
    assert suite._next_scope(queue, first=False) == "tests/integration/test_docker_image.py"
    assert suite._next_scope(queue, first=True) == "tests/integration/test_docker_containers.py"


def test_the_detector_of_docker_cluster_use_sees_a_parameter_a_string_and_a_fixture_built_on_it() -> None:
    needs = {"docker_cluster", "healed_docker"}
    assert _asked_for(ast.parse("def test_a(docker_cluster): pass"), needs) == {"docker_cluster"}
    assert _asked_for(ast.parse("def f(request):\n    request.getfixturevalue('docker_cluster')"), needs)
    assert _asked_for(ast.parse("async def test_b(tmp_path, *, healed_docker): pass"), needs) == {"healed_docker"}
    assert not _asked_for(ast.parse('def test_c(docker_image):\n    """not the docker_cluster"""'), needs)
    conftests = [
        ast.parse("def healed_docker(docker_cluster): pass\ndef image(docker_image): pass"),
        ast.parse("def twice(request):\n    request.getfixturevalue('healed_docker')"),
    ]
    assert _built_on("docker_cluster", conftests) == {"docker_cluster", "healed_docker", "twice"}


def test_the_timeline_names_each_workers_busy_time_and_its_idle_tail() -> None:
    from tests.timeline_plugin import summary

    nodes = {"gw1": {"items": 3, "busy": 50.4, "end": 160.0}, "gw0": {"items": 7, "busy": 98.0, "end": 200.0}}
    assert summary(nodes, 100.0) == [
        "gw0: 7 items, busy 98 s, done at 100 s (last)",
        "gw1: 3 items, busy 50 s, done at 60 s (40 s before the last worker)",
    ]
    assert summary({}, 0.0) == []


def test_the_cpu_by_file_names_the_largest_first_and_sums_the_rest() -> None:
    from tests.timeline_plugin import by_file

    files = {"a.py": [10.0, 2.0, 3.0], "b.ipynb": [100.0, 90.0, 1.0], "c.py": [5.0, 40.0, 2.0]}
    assert by_file(files, top=2) == [
        "     90 CPU-s     100 s wall     1 items  b.ipynb",
        "     40 CPU-s       5 s wall     2 items  c.py",
        "      2 CPU-s      10 s wall     3 items  the other 1 files",
        "    132 CPU-s in all (the items' processes and their descendants)",
    ]
    assert by_file({}) == []


def test_an_items_cpu_holds_the_children_it_started_and_reaped() -> None:
    import subprocess
    import sys

    from tests.timeline_plugin import _cpu

    before = _cpu()
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)
    assert _cpu() - before >= 0.3  # the child's 0.3 CPU-s are counted once it is reaped


def test_a_live_childs_cpu_is_counted_once_at_the_looks() -> None:
    import subprocess
    import sys

    from tests.timeline_plugin import live_descendants_cpu

    live_descendants_cpu()  # the looks before this test
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\ntime.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", burn])
    try:
        import psutil

        proc, deadline = psutil.Process(child.pid), time.monotonic() + 60  # 0.3 CPU-s, on a busy machine
        while proc.cpu_times().user + proc.cpu_times().system < 0.3:
            assert time.monotonic() < deadline and child.poll() is None, "the child did not burn its 0.3 CPU-s"
            time.sleep(0.05)
        assert live_descendants_cpu() >= 0.3  # alive: counted at the look
        assert live_descendants_cpu() < 0.1  # and not again at the next one
    finally:
        child.kill()
        child.wait()


def test_a_worker_takes_the_longest_scope_it_may_take_and_the_last_ones_only_at_the_end() -> None:
    seconds = {"a.py": 5.0, "b.ipynb": 120.0, "c.py": 40.0, "tests/integration/test_lifecycle.py": 300.0}
    queue = ["a.py", "tests/integration/test_lifecycle.py", "c.py", "b.ipynb", "new.py"]
    taken = []
    while (scope := suite._next_scope(queue, first=False, seconds=seconds)) is not None:
        taken.append(scope)
        queue.remove(scope)
    # longest first; a scope not in the table counts tests/scope_seconds.UNKNOWN (10 s); the lifecycle test last
    assert taken == ["b.ipynb", "c.py", "new.py", "a.py", "tests/integration/test_lifecycle.py"]
    matrix = "tests/integration/test_fault_matrix.py"
    assert suite._next_scope(["b.ipynb", matrix], first=True, seconds=seconds) == matrix  # pinned before longest


def test_every_file_marked_last_is_taken_last() -> None:
    marked = [
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests").rglob("test_*.py")
        if re.search(r"pytest\.mark\.last\b", p.read_text())
    ]
    assert marked and all(suite.LAST.fullmatch(m) for m in marked), marked


def test_the_scope_table_is_read_from_durations_lines_by_scope() -> None:
    from tests.scope_seconds import from_durations, load

    log = "\n".join(
        [
            "12:00:01 3.50s call     tests/integration/test_wrong_answers.py::test_wrong[lab06-t1-x]",
            "12:00:01 1.50s setup    tests/integration/test_wrong_answers.py::test_wrong[lab06-t2-y]",
            "12:00:01 2.00s call     notebooks/03_transactions.ipynb::Cell 4",
            "12:00:01 9.00s call     tests/unit/test_wait.py::test_x",  # the unit tier is not scheduled by scope
            "12:00:01 99.0s call     tests/integration/test_workshop_offline.py::test_x",  # system: queue order
            "12:00:01 99.0s call     tests/browser/test_course_in_lab_container.py::test_x",  # system too
        ]
    )
    assert from_durations(log, suite) == {
        "notebooks/03_transactions.ipynb": 2.0,
        "tests/integration/test_wrong_answers.py::lab06": 5.0,
    }
    table = load()
    assert table["tests/integration/test_fault_matrix.py"] > 100  # the committed table holds the long ones
    assert "tests/integration/test_workshop_offline.py" not in table  # and no system-tier scope


def test_the_scope_table_is_made_from_every_items_seconds_and_names_every_file_of_the_two_tiers(tmp_path) -> None:
    from tests.scope_seconds import _marks, from_items, load, scope_files
    from tests.timeline_plugin import write_item_seconds

    items = tmp_path / "items.json"
    write_item_seconds(str(items), {"tests/integration/test_wrong_answers.py::test_wrong[lab06-t1-x]": 3.5})
    write_item_seconds(str(items), {"notebooks/03_transactions.ipynb::Cell 4": 0.2, "tests/unit/test_wait.py::t": 9})
    assert from_items(json.loads(items.read_text()), suite) == {  # merged; the unit tier's item left out
        "notebooks/03_transactions.ipynb": 0.2,
        "tests/integration/test_wrong_answers.py::lab06": 3.5,
    }
    # A file missing from the committed table counts 10 s and is handed out last: refresh the table (its docstring).
    notebooks = [p for p in (ROOT / "notebooks").glob("*.ipynb") if '"cell_type": "code"' in p.read_text()]
    found = [*(ROOT / "tests").glob("*/**/test_*.py"), *notebooks]  # a notebook without code has no item
    files = [p.relative_to(ROOT).as_posix() for p in found]
    from tests.suite import SITE_LATER

    later = {a.split("=", 1)[1] for a in SITE_LATER}
    scheduled = {f for f in files if suite.tier_of(f, _marks(f)) in ("cluster", "course") and f not in later}
    assert scheduled - scope_files(load()) == set()


def test_in_the_system_tier_the_worker_with_the_lab_container_leaves_the_offline_install_to_gw0() -> None:
    """xdist hands each worker two scopes at the start; gw1's second must not be the install (run 76: gw0 then
    sat idle 134 s after its pinned docker tests)."""
    container, install = "tests/browser/test_course_in_lab_container.py", "tests/integration/test_workshop_offline.py"
    # xdist's queue: the scopes with the most tests first; the install and the lab container have one each
    queue = ["tests/integration/test_docker_image.py", "tests/integration/test_docker_bad_input.py", install]
    assert suite._next_scope([*queue, container], first=False) == container
    assert suite._next_scope(queue, first=False) == "tests/integration/test_docker_image.py"  # not the install
    assert suite._next_scope(queue, first=True) == "tests/integration/test_docker_image.py"


class _Item:
    """What tests/measure_guard.py reads of a pytest item: its node id, path, fixtures and marks (closest first)."""

    def __init__(self, nodeid: str, fixtures: tuple[str, ...] = (), timeout: float | None = None) -> None:
        self.nodeid, self.path, self.fixturenames = nodeid, Path(nodeid.split("::")[0]), list(fixtures)
        self.marks = [pytest.mark.timeout(timeout).mark] if timeout is not None else []

    def add_marker(self, marker: Any, append: bool = True) -> None:
        self.marks.insert(len(self.marks) if append else 0, marker.mark)

    def get_closest_marker(self, name: str) -> Any:
        return next((m for m in self.marks if m.name == name), None)


class _Config:
    def __init__(self, ini: str = "300") -> None:
        self.option, self.ini = type("Option", (), {"timeout": None})(), ini

    def getini(self, name: str) -> str:
        assert name == "timeout"
        return self.ini


def test_an_item_that_may_measure_a_shared_run_gets_its_guard_plus_the_measurements_allowance() -> None:
    """CI's stop 38: the fault matrix, measured in the set-up of its first test, was killed by that test's 300 s guard
    in the heal of a cell that had killed a broker. The guard of an item that may measure is its own plus ALLOWANCE
    x the measurement's estimate."""
    from eoslab.bench import faults, producers
    from eoslab.runs import matrix
    from tests.measure_guard import ALLOWANCE, guard, measures

    fault_s = ALLOWANCE * faults.estimate_s()
    bench_s = ALLOWANCE * producers.estimate_s(matrix("quick"))
    cells = _Item("tests/integration/test_fault_matrix.py::test_x", ("cells", "fault_run"))
    nb05, nb05_later = _Item("notebooks/05_exactly_once_pipeline.ipynb::Cell 0"), _Item("notebooks/05_x.ipynb::Cell 3")
    nb06, lab06 = _Item("notebooks/06_cost_of_exactly_once.ipynb::Cell 0"), _Item("labs/lab06_cost.ipynb::Cell 0")
    bench = _Item("tests/integration/test_lab06.py::test_y", ("bench_runs",), timeout=600)
    plain = _Item("tests/integration/test_lab05.py::test_z", ("cluster",))
    items = [cells, nb05, nb05_later, nb06, lab06, bench, plain]
    assert [measures(i) for i in items] == [("faults",), ("faults",), (), ("bench",), ("bench",), ("bench",), ()]
    guard(_Config(), items, "quick")  # type: ignore[arg-type]
    guards = [None if (m := i.get_closest_marker("timeout")) is None else m.args[0] for i in items]
    assert guards == [300 + fault_s, 300 + fault_s, None, 300 + bench_s, 300 + bench_s, 600 + bench_s, None]
    assert fault_s > 2 * 275  # twice the slowest fault run measured in the suite (the Intel machine's fresh one)
    unguarded = _Item("tests/integration/test_fault_matrix.py::test_x", ("fault_run",))
    guard(_Config(ini="0"), [unguarded], "quick")  # type: ignore[arg-type]
    assert unguarded.get_closest_marker("timeout") is None  # `timeout = 0` (no guard) stays no guard


def test_the_last_line_gives_each_tiers_minutes_and_the_cores_it_kept_busy(tmp_path: Path) -> None:
    from tests.suite import Suite, machine_busy

    run = Suite(50, tmp_path, [])
    run.seconds, run.busy = {"unit": 300.0, "site": 60.0}, {"unit": 480.0}
    assert run.report() == "make test: unit 5.0 min (1.6 cores busy), site 1.0 min"
    before = machine_busy()
    t = time.process_time()
    while time.process_time() - t < 0.2:
        pass
    assert machine_busy() - before >= 0.15  # this process's own 0.2 CPU-s are the machine's
