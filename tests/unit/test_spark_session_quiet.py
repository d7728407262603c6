"""The analysis's Spark session starts quietly: a learner's notebook cell shows the result, not the
driver JVM's start-up warnings (NativeCodeLoader's, "Setting default log level to WARN", ...); and it leaves
nothing in the temporary folder: Spark's files go to the process's scratch folder, deleted at its exit. With
``EOSLAB_SPARK_JIT=c1`` (`make test` sets it) the driver JVM runs with the C1 compiler only."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import _early
import pytest

pytestmark = pytest.mark.jvm

SCRIPT = """
import os
from pathlib import Path
from eoslab.analysis import spark_session
spark = spark_session(kafka=False)
print(spark.range(5).count())
flags = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
print("JIT", "-XX:TieredStopAtLevel=1" in list(flags))
print("AQE", spark.conf.get("spark.sql.adaptive.enabled"))
scratch = Path(os.environ["TMPDIR"], f"eoslab-spark-{os.getpid()}")
assert any(scratch.glob("spark-*")), sorted(scratch.iterdir())  # Spark's own folder is in the scratch folder
spark.stop()
"""


def _session(folder: Path) -> _early.Child:
    return _early.Child(
        [sys.executable, "-c", SCRIPT], env={**os.environ, "TMPDIR": str(folder), "EOSLAB_SPARK_JIT": "c1"}, timeout=180
    )


@pytest.mark.early(start=_session)  # a JVM's start: it runs beside the tier's other tests (_early.py)
def test_a_session_prints_its_result_and_no_jvm_warning(early_child: _early.Started) -> None:
    done = early_child.result()
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["5", "JIT", "True", "AQE", "false"]  # the count; C1; no adaptive re-planning
    left = sorted(p.name for p in early_child.folder.iterdir())  # the child's TMPDIR: its scratch deleted at exit
    assert not [name for name in left if name.startswith(("spark-", "blockmgr-", "eoslab-spark-"))], left
    # the JVM itself says this (Spark 4 adds --add-modules jdk.incubator.vector); no log4j setting reaches it
    jvm = "WARNING: Using incubator modules: jdk.incubator.vector"
    noise = [line for line in done.stderr.splitlines() if line.strip() and line.strip() != jvm]
    assert noise == [], "\n".join(noise[:20])


def test_scratch_folders_of_processes_that_are_gone_are_deleted_and_a_live_ones_kept(tmp_path: Path) -> None:
    from eoslab.analysis._session import SCRATCH_PREFIX, scratch_dir

    gone, alive = tmp_path / f"{SCRATCH_PREFIX}999999999", tmp_path / f"{SCRATCH_PREFIX}{os.getppid()}"
    for folder in (gone, alive):
        (folder / "spark-x" / "userFiles").mkdir(parents=True)
    other = tmp_path / "eoslab-spark-notes"  # not a pid: not the kit's
    other.mkdir()
    mine = scratch_dir(tmp_path)
    assert mine == tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}" and mine.is_dir()
    assert not gone.exists() and alive.is_dir() and other.is_dir()
    assert scratch_dir(tmp_path) == mine  # one per process


def test_the_driver_keeps_c2_unless_the_suite_asks_for_c1(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from eoslab.analysis._session import SPARK_JIT_ENV, _jit_flags
    from tests.suite import Suite

    monkeypatch.delenv(SPARK_JIT_ENV, raising=False)
    assert _jit_flags() == ""  # a learner's session: C2
    assert Suite(50, tmp_path, []).env[SPARK_JIT_ENV] == "c1"  # make test's tiers
    monkeypatch.setenv(SPARK_JIT_ENV, "c1")
    assert _jit_flags() == " -XX:TieredStopAtLevel=1"
