"""`make test`: the four tiers, one pytest each, on clusters of the suite's own, beside whatever a learner runs.

usage: python -m tests.suite [unit] [cluster] [course] [system] [-- PYTEST_ARGS ...]

With no tier named it runs all four, fastest feedback first, and stops at the first that fails (its exit code is
the run's). PYTEST_ARGS that name files or tests run those instead of the whole suite, within the tiers named
(`make test-cluster PYTEST_ARGS=tests/integration/test_cluster.py`). Environment: TEST_WORKERS (3: the system tier's
xdist workers), CLUSTER_WORKERS (3), COURSE_WORKERS (3; 0: one process), EOSLAB_COURSE_BACKEND (docker: the course
tier's clusters; local for a quick run), EOSLAB_BROKER_JIT and EOSLAB_SPARK_JIT (c1: the suite's brokers and Spark
drivers stop at the C1 compiler; a learner's keep C2).

- Ports: every cluster of the suite sits at a base offset chosen free here (tests/suite_ports.py), never offset 0
  nor the shell's ``EOSLAB_PORT_OFFSET``, where a learner's cluster runs (``make lab``). A learner's running
  cluster is snapshotted before the first tier and after the last (tests/learner_guard.py): a node restarted,
  a topic or a partition folder gone fails the run, naming it.
- Data: one runs folder (``$EOSLAB_RUNS``, deleted at the end) holds the suite's clusters' data and the bench
  and fault matrix runs that one tier measures and the next reads; a learner's ``kafka-data/`` is never used.
- unit: tests/unit whole (lint and Spark included), before anything is installed or started.
- cluster: the kit's behaviour on CLUSTER_WORKERS local clusters (gw0's started here, gwK's by its worker at
  +K*5000: conftest.py, tests/worker_clusters.py); all stopped at the end of the tier, side by side. Beside it,
  what the later tiers need from the system is installed (tools/system/prepare.sh: Chromium, the Docker engine,
  the Kafka image; its output is shown when the course tier starts).
- course: every notebook and lab on COURSE_WORKERS docker clusters at +500 (the containerized cluster; volumes
  deleted after), while the lab image builds beside it; then the course as a website from the notebooks it ran
  (`make site-test`: built with Sphinx, then read in Chromium), beside the system tier.
- system: the docker backend's own tests, the offline install, the course in the lab container.
What the tiers need from the system (Chromium, a Docker engine with compose v2, the Kafka image) is installed
where missing, as root with apt (tools/system/*.sh; EOSLAB_SYSTEM_INSTALL=0 opts out and those tests skip, saying
why); the Docker engine started here is stopped at the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psutil

from tests import learner_guard, suite_ports

ROOT = Path(__file__).resolve().parents[1]
TIERS = ("unit", "cluster", "course", "system")
SITE_LATER = ["--ignore=tests/browser/test_site.py"]
"""The site's browser test is the course tier's, but needs the site built from the notebooks this tier runs:
`make site-test` runs it after the tier (:meth:`Suite.site`), so the tier leaves it out instead of skipping it."""
EOSLAB = [sys.executable, "-m", "eoslab.cli"]
SUITE = ["tests", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").glob("*.ipynb"))]
NBVAL = ["--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=120"]
KEEP_RUNS_ENV = "EOSLAB_SUITE_RUNS"


def _workers(name: str, default: int) -> int:
    raw = os.environ.get(name, "") or str(default)
    if not raw.isdigit():
        raise SystemExit(f"{name}={raw!r} is not a number of workers: set it to e.g. {default}, or unset it.")
    return int(raw)


def _run(argv: Sequence[str], env: dict[str, str]) -> int:
    return subprocess.run(list(argv), cwd=ROOT, env=env).returncode


def _side_by_side(*argvs: Sequence[str], env: dict[str, str]) -> int:
    """Run the commands at once (stopping clusters: ~13 s together instead of ~26 s one after the other)."""
    procs = [subprocess.Popen(list(a), cwd=ROOT, env=env, stdout=subprocess.DEVNULL) for a in argvs]
    return max(p.wait() for p in procs)


def _named(arg: str) -> bool:
    """True for a file, folder or node id of the repository (``tests/x.py::test_y``), not an option's value."""
    return not arg.startswith("-") and (ROOT / arg.split("::", 1)[0]).exists()


def pytest_argv(tier: str, workers: int, extra: Sequence[str], marks: str = "") -> list[str]:
    """One tier's pytest: the whole suite (or the files and tests ``extra`` names) filtered by the tier's mark (and
    ``marks``, e.g. ``"and jvm"``), its slowest steps listed at the end."""
    paths = [] if any(_named(a) for a in extra) else SUITE
    argv = [sys.executable, "-m", "pytest", *paths, *NBVAL, "-m", f"{tier} {marks}".strip(), "-p", "no:cacheprovider"]
    argv += ["--durations=30", "--durations-min=15"]
    if workers:
        argv += ["-n", str(workers)]
    return [*argv, *extra]


@contextmanager
def _clusters(env: dict[str, str], workers: int, command: str) -> Iterator[bool]:
    """The tier's session cluster started here (the fault proxy with it): True once it is up. At the end it and every
    worker's cluster stop (``command`` ``reset``: their data deleted too), however the tier ended."""
    try:
        yield _run([*EOSLAB, "up"], env) == 0
    finally:
        _side_by_side(
            [*EOSLAB, command], [sys.executable, "-m", "tests.worker_clusters", command, str(workers)], env=env
        )


def machine_busy() -> float:
    """The machine's busy CPU-seconds since boot, all cores (psutil.cpu_times: user, nice, system, irq, softirq,
    steal): a tier's difference is what every process of the machine spent in it, daemons and containers too."""
    t = psutil.cpu_times()
    return sum(getattr(t, f, 0.0) for f in ("user", "nice", "system", "irq", "softirq", "steal"))


class Suite:
    """One `make test` run: the base offset, the runs folder, the environment every tier inherits."""

    def __init__(self, base: int, runs: Path, extra: Sequence[str], tiers: Sequence[str] = TIERS) -> None:
        self.base = base
        self.runs = runs
        self.extra = list(extra)
        self.tiers = list(tiers)
        self.course_backend = os.environ.get("EOSLAB_COURSE_BACKEND") or "docker"
        self.env = {
            **os.environ,
            "EOSLAB_BACKEND": "local",
            "EOSLAB_RUNS": str(runs),
            "EOSLAB_PORT_OFFSET": str(base),
            "EOSLAB_DATA": str(runs / "kafka-data"),
            "EOSLAB_BROKER_JIT": os.environ.get("EOSLAB_BROKER_JIT") or "c1",
            # Spark's driver JVM at C1 (eoslab/analysis/_session.py): the suite's Spark jobs are seconds long, and C2's
            # compiles cost more CPU than they save there (test_analysis_runs.py, its process tree: 111 and 114 CPU-s
            # at C1, 128 and 155 at C2).
            "EOSLAB_SPARK_JIT": os.environ.get("EOSLAB_SPARK_JIT") or "c1",
            # The Docker engine this run's `docker.sh ensure` starts is recorded here and only here, so `stop` ends
            # this run's engine and never one another run started (a suite run inside a test, a learner's).
            "EOSLAB_DOCKER_STATE": str(runs / "dockerd.state"),
        }
        self.prep: subprocess.Popen[bytes] | None = None
        """tools/system/prepare.sh: Chromium, the Docker engine, the Kafka image; started with the cluster tier."""
        self.prep_rc: int | None = None
        self.lab_image: subprocess.Popen[bytes] | None = None
        self.site_run: tuple[subprocess.Popen[bytes], float] | None = None
        """`make site-test`, beside the system tier, and when it started (time.time)."""
        self.started: list[subprocess.Popen[bytes]] = []
        """Every process :meth:`_background` started."""
        self.seconds: dict[str, float] = {}
        self.busy: dict[str, float] = {}
        """Per tier, the machine's busy CPU-seconds (every process: the tier's clusters and containers too)."""

    def tier(self, name: str, env: dict[str, str], workers: int = 0, plugins: Sequence[str] = ()) -> int:
        t0, cpu0 = time.monotonic(), machine_busy()
        rc = _run([*pytest_argv(name, workers, self.extra), *plugins], env)
        self.seconds[name], self.busy[name] = time.monotonic() - t0, machine_busy() - cpu0
        return rc

    def report(self) -> str:
        """`make test`'s last line: each tier's minutes, and how many of the machine's cores it kept busy."""
        return "make test: " + ", ".join(
            f"{t} {s / 60:.1f} min" + (f" ({self.busy[t] / s:.1f} cores busy)" if t in self.busy and s else "")
            for t, s in self.seconds.items()
        )

    def unit(self) -> int:
        """The unit tier as two pytest processes side by side: its Spark tests (mark ``jvm``, tests/unit/conftest.py:
        ~160 s of a session's JVM, the tier's critical path when it ran in one process) in the background, the rest
        here; the Spark half's output follows. Files named in PYTEST_ARGS run in one process, as named."""
        if any(_named(a) for a in self.extra):
            return self.tier("unit", self.env)
        t0, cpu0 = time.monotonic(), machine_busy()
        spark = self._background(pytest_argv("unit", 0, self.extra, "and jvm"), "unit-jvm.log")
        rc = _run(pytest_argv("unit", 0, self.extra, "and not jvm"), self.env)
        spark_rc = spark.wait()
        self.seconds["unit"], self.busy["unit"] = time.monotonic() - t0, machine_busy() - cpu0
        print("make test: the unit tier's Spark tests (mark jvm), run beside the others:", flush=True)
        self._show("unit-jvm.log")
        return rc or spark_rc

    def _background(self, argv: Sequence[str], log: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """``argv`` started in a process group of its own, its output to ``log`` in the runs folder; remembered, so
        that the run's end stops it if it still runs (:meth:`stop_background`)."""
        with (self.runs / log).open("wb") as out:  # the child has its own copy of the file
            proc = subprocess.Popen(
                list(argv), cwd=ROOT, env=env or self.env, stdout=out, stderr=out, start_new_session=True
            )
        self.started.append(proc)
        return proc

    def stop_background(self) -> None:
        """At the run's end: waits for the system set-up (apt-get and dpkg are never cut halfway) and stops whatever
        else :meth:`_background` started that still runs (the unit tier's Spark half, the lab image's build, the
        site: make, its pytest and Chromium), each with its process group."""
        for proc in self.started:
            if proc.poll() is not None:
                continue
            if proc is self.prep:
                print(f"make test: waiting for the system set-up to end ({self.runs / 'prepare.log'})", flush=True)
                proc.wait()
            else:
                os.killpg(proc.pid, signal.SIGTERM)

    def _show(self, log: str) -> None:
        sys.stdout.write((self.runs / log).read_text(errors="replace"))
        sys.stdout.flush()

    def prepare(self) -> None:
        """What the course and system tiers need from the system (tools/system/prepare.sh), installed while the
        cluster tier runs: on a fresh machine its apt installs, debootstrap and image build take minutes, waiting
        on the network and the disk more than on the cores. Nothing when no later tier runs."""
        later = [t for t in self.tiers if t in ("course", "system")]
        if self.prep is None and later:
            docker = "system" in later or self.course_backend == "docker"
            argv = ["bash", "tools/system/prepare.sh", *(["docker"] if docker else [])]
            self.prep = self._background(argv, "prepare.log", {**self.env, "PYTHON": sys.executable})

    def _prepared(self) -> int:
        """Waits for :meth:`prepare` (started here when no cluster tier ran), shows its output once: its exit code."""
        self.prepare()
        if self.prep_rc is None and self.prep is not None:
            self.prep_rc = self.prep.wait()
            self._show("prepare.log")
        return self.prep_rc or 0

    def cluster(self) -> int:
        self.prepare()  # beside this tier, which needs none of it
        workers = _workers("CLUSTER_WORKERS", 3)
        env = {**self.env, "EOSLAB_KEEP_CLUSTER": "1"}
        with _clusters(env, workers, "down") as up:
            return self.tier("cluster", env, workers) if up else 1

    def course(self) -> int:
        backend = self.course_backend
        if self._prepared():
            return 1
        if backend == "docker":
            self.lab_image = self._background([*EOSLAB, "image", "ensure", "--lab"], "lab-image.log")
        workers = _workers("COURSE_WORKERS", 3)
        env = {
            **self.env,
            "EOSLAB_BACKEND": backend,
            "EOSLAB_PORT_OFFSET": str(self.base + suite_ports.DOCKER_STEP),
            "EOSLAB_DATA": str(self.runs / f"kafka-data-{backend}"),
            "EOSLAB_KEEP_CLUSTER": "1",
        }
        env["EOSLAB_EXECUTED_DIR"] = str(self.runs / "executed")  # the notebooks as run, for the site
        with _clusters(env, workers, "reset") as up:
            later = [] if any(_named(a) for a in self.extra) else SITE_LATER  # a file named is run as named
            rc = self.tier("course", env, workers, ["-p", "tests.executed_plugin", *later]) if up else 1
        if rc:
            return rc
        self.site()
        return 0 if "system" in self.tiers else self.site_done()

    def site(self) -> None:
        """The course as a website from the notebooks the course tier ran, and the site in Chromium (`make
        site-test`), beside the system tier when it runs: a core's work beside a tier that mostly waits on Docker."""
        site = ["make", "--no-print-directory", "site-test", f"SITE_EXECUTED={self.runs / 'executed'}"]
        argv = [*site, f"SITE_OUT={self.runs / 'site'}", "PYTEST_ARGS="]
        self.site_run = (self._background(argv, "site.log"), time.time())

    def site_done(self) -> int:
        """Waits for :meth:`site` and shows its output: its exit code (0 when no site was started)."""
        if self.site_run is None:
            return 0
        proc, t0 = self.site_run
        rc = proc.wait()
        self.seconds["site"] = (self.runs / "site.log").stat().st_mtime - t0  # its last line: when it ended
        minutes = self.seconds["site"] / 60
        print(f"make test: the site, built and read in Chromium beside the system tier ({minutes:.1f} min):")
        self._show("site.log")
        self.site_run = None
        return rc

    def _lab_image(self) -> int:
        if self.lab_image is None:
            return _run([*EOSLAB, "image", "ensure", "--lab"], self.env)
        rc = self.lab_image.wait()
        self._show("lab-image.log")
        return rc

    def system(self) -> int:
        rc = self._prepared() or self._lab_image() or self.tier("system", self.env, _workers("TEST_WORKERS", 3))
        return self.site_done() or rc


def _parse(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    args = list(argv)
    extra = args[args.index("--") + 1 :] if "--" in args else []
    tiers = args[: args.index("--")] if "--" in args else args
    if unknown := [t for t in tiers if t not in TIERS]:
        raise SystemExit(
            f"usage: python -m tests.suite [{'] ['.join(TIERS)}] [-- PYTEST_ARGS]; not a tier: {unknown[0]}"
        )
    return [t for t in TIERS if t in tiers] or list(TIERS), extra


def _learner() -> tuple[int, Path]:
    """Where the learner's own cluster is: their shell's offset and data folder (before the suite sets its own)."""
    from eoslab._paths import data_dir

    return suite_ports.learner_offset(os.environ), data_dir()


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # the clean-up below runs on SIGTERM as on Ctrl-C


def main(argv: Sequence[str]) -> int:
    tiers, extra = _parse(argv)
    offset, data = _learner()
    base = suite_ports.choose_base(offset)
    before = learner_guard.snapshot(offset, data)
    if before is not None:
        print(f"make test: your {before.backend} cluster at offset {offset} ({data}) runs: the suite leaves it alone.")
    print(f"make test: the suite's clusters at port offset {base} (brokers from 127.0.0.1:{19091 + base}).", flush=True)
    signal.signal(signal.SIGTERM, _terminated)
    kept = os.environ.get(KEEP_RUNS_ENV)  # a folder of measured runs to reuse (kept): tiers re-run like for like
    suite = Suite(base, Path(kept) if kept else Path(tempfile.mkdtemp(prefix="eoslab-runs.")), extra, tiers)
    rc = 0
    try:
        for tier in tiers:
            rc = getattr(suite, tier)()
            if rc:
                break
    finally:
        suite.stop_background()
        _run(["bash", "tools/system/docker.sh", "stop"], suite.env)  # before the runs folder, which holds its state
        if not kept:
            shutil.rmtree(suite.runs, ignore_errors=True)
        else:  # the clusters' data goes; the measured runs stay for the next run
            for data in suite.runs.glob("kafka-data*"):
                shutil.rmtree(data, ignore_errors=True)
        print(suite.report())
    if before is not None and (
        changed := learner_guard.changes(before, learner_guard.snapshot(offset, data), added=False)
    ):
        print(f"make test: YOUR CLUSTER CHANGED during the run: {'; '.join(changed)}.", file=sys.stderr)
        return rc or 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
