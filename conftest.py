"""Hooks for every test the suite collects, notebooks included (nbval items live outside tests/).

Every item carries exactly one tier mark, set here from its path (and its ``docker``/``workshop``
marks), so that a tier runs alone and nobody has to remember a mark:

    unit      tests/unit: no cluster (its ``jvm`` and ``lint`` items too)
    cluster   tests/integration: the kit's behaviour on the real cluster
    course    the notebooks under nbval, the labs graded (test_labNN, test_wrong_answers), the browser, and
              the experiments the notebooks show (test_fault_matrix, test_kafka17754, test_read_committed):
              in `make test` on the docker backend
    system    the docker backend's own tests (``docker``), the offline workshop install (``workshop``), and the suite
              run beside a learner's open course (``learner``)

`make test` runs them in this order, one pytest each, and stops at the first that fails: a typo in
pure code is reported in minutes instead of after the notebooks. The tiers share one bench matrix
and one fault matrix through ``$EOSLAB_RUNS`` (see :func:`shared_runs`).

The cluster, course and system tiers run on three pytest-xdist workers (tests/suite.py: CLUSTER_WORKERS,
COURSE_WORKERS, TEST_WORKERS), each with a cluster of its own: worker ``gw0`` the one `make test` started,
worker ``gwK`` one on ports +K*5000 with its data in the session's data folder + ``-gwK``
(:func:`_worker_cluster_env`), of the same backend (``$EOSLAB_BACKEND``), started before its first cluster or
course item and stopped at its end (in `make test`, by tests/worker_clusters.py after its tier: the cluster tier
on local clusters, the course tier on docker clusters, so every module and lab runs on the containerized
cluster). No test, notebook or lab is ever disturbed by a node fault, a proxy rule or a heal of another worker.
A notebook's cells, and a test file's tests (but those of :data:`SPREAD`), stay on one worker
(:func:`xdist_scope`); :data:`PINNED` scopes run on gw0.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from eoslab.cluster import Cluster

from tests.measure_guard import first_cell, guard, measures

pytest_plugins = ["tests.timeline_plugin"]  # each xdist worker's busy time and idle tail, after each tier


def worker_index() -> int:
    """K of this pytest-xdist worker ``gwK``; 0 outside xdist."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0


def _worker_cluster_env() -> None:
    """Point worker gwK (K >= 1) at its own cluster (tests/worker_clusters.py), before anything imports eoslab
    (whose TOPOLOGY is read from the environment once). nbval's kernels and the graders' subprocesses inherit it."""
    k = worker_index()
    if k == 0 or os.environ.get("EOSLAB_TEST_WORKER") == str(k):
        return
    from tests.worker_clusters import worker_data, worker_offset

    os.environ["EOSLAB_PORT_OFFSET"] = worker_offset(k, os.environ)  # first: eoslab's TOPOLOGY reads it at import
    os.environ["EOSLAB_DATA"] = worker_data(k)
    os.environ["EOSLAB_TEST_WORKER"] = str(k)


_worker_cluster_env()

TIERS = ("unit", "cluster", "course", "system")
"""The tiers, fastest feedback first: the order `make test` runs them in."""
_SYSTEM_MARKS = frozenset({"docker", "workshop", "learner"})
_COURSE_TESTS = re.compile(
    r"tests/browser/.*|tests/integration/(m\d\d/)?test_(lab\d+|wrong_answers|fault_matrix|kafka17754|read_committed)\.py"
)
"""Tests of what the course shows: with the notebooks, on the course's backend. The fault matrix is one: notebook
05 audits the output topics it wrote, on the cluster it ran on (gw0's, :data:`PINNED`). KAFKA-17754's experiments
and read_committed's held Produce and late writes are others: their runs are kept per backend
(eoslab/demos/_kept.py), for notebooks 04 and 05 to show (:data:`PINNED_ORDER`)."""


def tier_of(path: str, marks: Collection[str]) -> str | None:
    """The tier of an item of the file ``path`` (relative to the repository, '/'-separated) that carries
    ``marks``; None when no rule covers that file (collection then stops and says so)."""
    if path.startswith("tests/unit/"):
        return "unit"
    if not _SYSTEM_MARKS.isdisjoint(marks):
        return "system"
    if path.endswith(".ipynb") or _COURSE_TESTS.fullmatch(path):
        return "course"
    if path.startswith("tests/integration/"):
        return "cluster"
    return None


def _relative(item: pytest.Item) -> str:
    try:
        return item.path.relative_to(item.config.rootpath).as_posix()
    except ValueError:  # a notebook outside the repository, e.g. a copy under /tmp
        return item.path.as_posix()


def _mark_tier(item: pytest.Item) -> str:
    """Give ``item`` its tier as its only tier mark. The path decides: a tier mark written by hand is
    dropped from the item and the nodes above it (the labs' modules still say ``cluster``, from when that
    mark meant "needs the running cluster"); the tier is then added to the item itself."""
    tier = tier_of(_relative(item), {m.name for m in item.iter_markers()})
    if tier is None:
        raise pytest.UsageError(
            f"{item.nodeid} is in no test tier ({', '.join(TIERS)}): give its folder a rule in tier_of "
            "in the root conftest.py."
        )
    for node in item.listchain():
        node.own_markers[:] = [m for m in node.own_markers if m.name not in TIERS]
    item.add_marker(tier)
    return tier


def _is_notebook(item: pytest.Item) -> bool:
    return item.nodeid.endswith(".ipynb") or ".ipynb::" in item.nodeid


SPREAD = re.compile(
    r"tests/integration/(m\d\d/)?test_(wrong_answers|lab\d+|classroom|cluster|bad_input|faults_proxy)\.py"
)
"""Test files whose tests are each self-contained (function-scoped fixtures: their own kernel, topic, heal) and
long: the xdist workers take them one test at a time. Every other test file runs whole on one worker (its
module-scoped fixtures, e.g. the fault matrix, set up once), and so does each notebook (its cells are one
kernel's). tests/unit/test_suite_tiers.py checks that no file here has a module-scoped fixture."""


ONE_WORKER_ROWS = re.compile(r"(tests/integration/test_wrong_answers\.py)::\w+\[(lab06)\b.*\]")
"""Spread rows that share one costly set-up: lab 06's wrong answers and its untouched lab each need the lab's
executed setup cell (a Spark session and the loaded runs, ~20-28 s), cached per process. As one scope they pay
it on one worker, not two."""


def xdist_scope(nodeid: str) -> str:
    """The unit of work an xdist worker takes: the test itself in a :data:`SPREAD` file (but one scope for
    :data:`ONE_WORKER_ROWS`), else its file."""
    path = nodeid.split("::", 1)[0]
    shared = ONE_WORKER_ROWS.fullmatch(nodeid)
    if shared:
        return f"{shared.group(1)}::{shared.group(2)}"
    return nodeid if SPREAD.fullmatch(path) else path


PINNED_ORDER = (
    "tests/integration/test_fault_matrix.py",
    "tests/integration/test_kafka17754.py",
    "tests/integration/test_read_committed.py",
    "tests/integration/test_conformance.py",
    "tests/integration/test_docker_containers.py",
    "notebooks/04_read_committed.ipynb",
    "notebooks/05_exactly_once_pipeline.ipynb",
)
"""Scopes that run on worker gw0 only, whose cluster is the session's, in the order gw0 takes them (before any
other scope). The fault matrix (course tier) writes its output topics on the cluster it runs on, and notebook 05
audits those topics on its own cluster. The tests of the experiments notebooks 04 and 05 show (test_kafka17754,
test_read_committed) keep their runs there (eoslab/demos/_kept.py), before the notebooks, which then show them
instead of running them again (~90 s). The order is explicit: xdist queues the scopes with the most items first,
so taking the first pinned scope of its queue gave gw0 the notebooks before the tests (runs 60, 61: notebook 05's
set-up measured the fault matrix itself, 181 s, and 04/05 ran their experiments live).
In the system tier the files that use ``docker_cluster`` (one session fixture: on a second worker it would
start a second docker cluster), then the offline install, while gw1 runs the course in the lab container
(:data:`LEFT_TO_OTHERS`); the docker tests that need only the image (``docker_image``) are not here: either worker
takes them (its
bad-input cases at its spare offset, +5000 + 750: no port shared with gw0's docker cluster at +500).
tests/unit/test_suite_tiers.py checks that every file using ``docker_cluster`` is here, and no other file
marked ``docker``."""
PINNED = re.compile("|".join(re.escape(s) for s in PINNED_ORDER))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Schedule by :func:`xdist_scope` (xdist's own ``loadgroup`` cannot: it renames items by ``_nodeid``,
    which pytest 9 no longer reads), :data:`PINNED` scopes on gw0 (first there: the fault matrix is long)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByScope(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no type hints
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            scope = _next_scope(list(self.workqueue), first=node.gateway.id == "gw0")
            if scope is None:  # only gw0's scopes are left: nothing more for this worker
                node.shutdown()
                return
            work_unit = self.workqueue.pop(scope)
            self.assigned_work.setdefault(node, {})[scope] = work_unit
            collection = self.registered_collections[node]
            node.send_runtest_some([collection.index(nodeid) for nodeid, done in work_unit.items() if not done])

    return ByScope(config, log)


LEFT_TO_OTHERS = re.compile(r"tests/browser/test_course_in_lab_container\.py|tests/integration/test_devcontainer\.py")
"""Long scopes for the other worker, taken there before anything else, in this order: the course in the lab container
(~180 s: its own six nodes and JupyterLab started by the documented command, notebook 01 and lab 01 in Chromium),
then the course in its dev container (~150 s: the same notebook and lab inside it), while gw0 runs its pinned docker
tests (~60 s), then the offline install (~120 s) and the suite beside a learner's course (~130 s). xdist queues
the scopes with the most tests first, so a one-test scope came last: gw0, asking for its next scope while its pinned
ones ran, took such a scope and ran it after them while gw1 sat idle. gw0 takes them only when nothing else is left
(one worker, ``-n 1``)."""


LAST = re.compile(r"tests/integration/test_lifecycle\.py")
"""Scopes taken only when nothing else is left (their tests are marked ``last``: the lifecycle test stops and
restarts its worker's whole cluster). tests/unit/test_suite_tiers.py checks that every file marked last is here."""


def _longest_first(scopes: list[str], seconds: dict[str, float]) -> str | None:
    """The scope expected to take longest (tests/scope_seconds.json; one missing counts UNKNOWN), a :data:`LAST`
    one only when nothing else is left; the queue's order among equals."""
    from tests.scope_seconds import UNKNOWN

    if not scopes:
        return None
    return max(scopes, key=lambda s: (not LAST.fullmatch(s), seconds.get(s, UNKNOWN)))


def _next_scope(queue: list[str], first: bool, seconds: dict[str, float] | None = None) -> str | None:
    """The scope a worker takes next from ``queue``: gw0 (``first``) its pinned ones before any other, in
    :data:`PINNED_ORDER`, then any scope but one :data:`LEFT_TO_OTHERS` (unless nothing else is left); the others
    those first, then any scope but a pinned one. Among those it may take, the longest first (``seconds``, by
    default the measured table): a long scope taken last leaves the other workers idle at the tier's end."""
    if seconds is None:
        from tests.scope_seconds import load

        seconds = load()
    if first:
        mine = sorted((s for s in queue if PINNED.fullmatch(s)), key=PINNED_ORDER.index)
        rest = [s for s in queue if not LEFT_TO_OTHERS.fullmatch(s)]
        return next(iter(mine), None) or _longest_first(rest, seconds) or (queue[0] if queue else None)
    theirs = (s for s in queue if LEFT_TO_OTHERS.fullmatch(s))
    return next(theirs, None) or _longest_first([s for s in queue if not PINNED.fullmatch(s)], seconds)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Tier by tier, as `make test` runs them, also when one pytest runs them all. Within a tier:
    # the workshop install before the docker tests (their docker cluster, a session fixture, then
    # starts late and never runs idle beside the install); tests marked `last` (the lifecycle test
    # stops and restarts the whole cluster) after the others; the notebooks (they heal the cluster
    # themselves, in their setup cell) after the labs' tests. The sort is stable: file order holds
    # otherwise.
    tiers = {item.nodeid: _mark_tier(item) for item in items}

    def rank(item: pytest.Item) -> tuple[int, bool, bool, bool]:
        return (
            TIERS.index(tiers[item.nodeid]),
            item.get_closest_marker("docker") is not None,
            item.get_closest_marker("last") is not None,
            _is_notebook(item),
        )

    items.sort(key=rank)
    guard(config, items, SHARED_MATRIX)  # an item that may measure a shared run in its set-up: tests/measure_guard.py


# --- The measurements the tiers share -------------------------------------------------------------
# Module 06's notebook (and its lab) analyse bench runs, module 05's notebook and the fault matrix tests
# read a fault matrix run: each costs minutes (bench ~1 min, faults ~3 min), so a session measures each
# ONCE into $EOSLAB_RUNS, which nbval's kernels and the graders' subprocesses inherit. `make test`
# exports one folder for its four pytest runs: a tier finds there what an earlier one measured.
SHARED_MATRIX = "quick"
_FAULT_RUN: list[Path] = []


def reusable_bench_run(root: Path, matrix: str = SHARED_MATRIX) -> Path | None:
    """A complete run of ``matrix`` under ``root``, found as module 06 finds runs (a run being written has
    no env table yet, or is still ``<id>.partial``); None when there is none."""
    from eoslab.runs import read_table

    try:
        env = read_table("env", root)
    except FileNotFoundError:
        return None
    done = env[(env["matrix"] == matrix) & ~env["run"].str.endswith(".partial")]
    return root / done["run"].iloc[0] if len(done) else None


def reusable_fault_run(root: Path, records: int) -> Path | None:
    """The newest complete fault matrix run under ``root`` with every cell at ``records`` inputs (what the
    fault matrix tests assert), found as notebook 05 finds it (a run being written has no faults table
    yet); None when there is none. Every cell: each fault x kind in the classic group protocol and the
    EOS processor's KIP-848 cells (``eoslab.bench.faults.plan``)."""
    from eoslab.bench.faults import plan
    from eoslab.runs import read_faults

    try:
        rows = read_faults(root)
    except FileNotFoundError:
        return None
    every = set(plan())
    fits = [
        root / run
        for run, cells in rows.groupby("run")
        if len(cells) == len(every)
        and "group_protocol" in cells
        and set(zip(cells["fault"], cells["kind"], cells["group_protocol"], strict=True)) == every
        and (cells["records"] == records).all()
    ]
    return max(fits, key=lambda f: (f / "faults.parquet").stat().st_mtime, default=None)


def _runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``$EOSLAB_RUNS`` (`make test` sets one for all its tiers), else a folder of this session, exported."""
    from eoslab.runs import RUNS_ENV

    if not os.environ.get(RUNS_ENV):
        os.environ[RUNS_ENV] = str(tmp_path_factory.mktemp("bench") / "runs")
    return Path(os.environ[RUNS_ENV])


@contextmanager
def _measuring(root: Path, what: str) -> Iterator[None]:
    """One measurer at a time of ``what`` in ``root``: the other xdist worker waits here, then finds the
    run the first one wrote instead of measuring it again beside it."""
    import fcntl

    root.mkdir(parents=True, exist_ok=True)
    with (root / f".{what}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def shared_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared runs folder, holding a complete quick-matrix run: the one an earlier tier (or the other
    worker) measured there, else one measured now."""
    root = _runs_root(tmp_path_factory)
    with _measuring(root, "bench"):
        if reusable_bench_run(root) is None:
            from eoslab.bench.producers import run_matrix
            from eoslab.cluster import Cluster

            run_matrix(Cluster().up(), SHARED_MATRIX, root)
    return root


def shared_fault_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fault matrix run of this session, at the smallest size, in the shared runs folder (where
    notebook 05 finds it): the one an earlier tier measured there, else one measured now."""
    if not _FAULT_RUN:
        from eoslab.demos.pipeline import MIN_RECORDS

        root = _runs_root(tmp_path_factory)
        with _measuring(root, "faults"):
            folder = reusable_fault_run(root, MIN_RECORDS)
            if folder is None:
                from eoslab.bench.faults import run_faults
                from eoslab.cluster import Cluster

                folder, _ = run_faults(Cluster().up(), records=MIN_RECORDS, root=root, progress=False)
        _FAULT_RUN.append(folder)
    return _FAULT_RUN[0]


@pytest.fixture(scope="session")
def fault_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This session's fault matrix run folder (``runs/faults-<id>``), shared with notebook 05."""
    return shared_fault_run(tmp_path_factory)


@pytest.fixture(scope="session")
def bench_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared runs folder (also $EOSLAB_RUNS) with a quick-matrix run measured on the real cluster,
    shared with notebook 06 and lab 06."""
    from eoslab.runs import run_folders

    root = shared_runs(tmp_path_factory)
    assert run_folders(root)
    return root


_WORKER_CLUSTER: list[Cluster | None] = []
"""The cluster this xdist worker (K >= 1) started for itself: stopped at the end of its session."""


def _ensure_worker_cluster(item: pytest.Item) -> None:
    """Worker gwK (K >= 1) starts its own cluster before its first cluster or course item (worker gw0 and a
    plain pytest use the one `make test` started, or the ``cluster`` fixture starts it)."""
    if _WORKER_CLUSTER or worker_index() == 0:
        return
    if item.get_closest_marker("cluster") is None and item.get_closest_marker("course") is None:
        return
    from eoslab._up import up
    from eoslab.cluster import Cluster

    cluster = Cluster()  # the backend of $EOSLAB_BACKEND, as gw0's
    if not cluster.is_up():
        up(cluster)  # what `eoslab up` does for gw0: the cluster AND its fault proxy
        _WORKER_CLUSTER.append(cluster)
    else:
        _WORKER_CLUSTER.append(None)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Worker gwK stops what it started, as `eoslab down` does: the fault proxy, then the nodes."""
    cluster = _WORKER_CLUSTER[0] if _WORKER_CLUSTER else None
    if cluster is not None and not os.environ.get("EOSLAB_KEEP_CLUSTER"):
        from eoslab.faults import stop_proxy

        stop_proxy(cluster.topology)
        cluster.down()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A notebook cell's nbval limit is its guard (eoslab._timeouts.cell_guard: the limit given, or four times the
    cell's measured time when that is longer), so a cell that legitimately takes a minute on a quiet machine is not
    cut off on a machine at half the speed, while a hang is still stopped."""
    from eoslab._timeouts import nbval_cell_guard

    with nbval_cell_guard(item):
        yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Heal before each notebook (nbval item of its first cell), so no lesson leaks into the next."""
    _ensure_worker_cluster(item)
    if first_cell(item):
        import eoslab

        factory = item.config._tmp_path_factory  # type: ignore[attr-defined]
        what = measures(item)  # the notebook's shared runs, measured here (under this item's guard) if missing
        if "bench" in what:
            shared_runs(factory)
        if "faults" in what:
            shared_fault_run(factory)
        eoslab.heal(eoslab.Cluster())  # the backend of $EOSLAB_BACKEND, as the notebooks use
