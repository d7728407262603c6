"""A class that outgrows one machine: the instructor's class notebook and module 06's analysis on a Spark standalone
cluster instead of ``local[2]``, chosen by ``$EOSLAB_SPARK_MASTER`` alone (docs/instructor.md, "The class's runs on
the department's Spark").

The cluster is a master and one worker started by PySpark's own daemon script (``pyspark/sbin/spark-daemon.sh``,
what Spark's ``start-master.sh``/``start-worker.sh`` call; the pip package ships it without those wrappers), on
loopback ports of their own, with their logs, pids and work folders in this test's temporary folder, and stopped by
the same script at the end. The class notebook runs under nbval with the master's URL in the environment, and
module 06's read of a topic runs in a session on it; the master's own account (its JSON status) then shows their
applications, run by executors on the worker: the runs' Parquet files were read there, and the topic through the
Spark Kafka source, whose jars the driver handed to the executors (``spark.jars``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from eoslab import _java
from eoslab._ports import LOOPBACK, free_port
from eoslab._timeouts import CELL_GUARD_FACTOR
from eoslab._wait import wait_until
from tests.integration._produce import produce_all

ROOT = Path(__file__).resolve().parents[2]
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
CLASS_NOTEBOOK_SECONDS = 90
"""The class notebook's whole run on the standalone master, measured (CI's run on this machine kind: 90 s; its
first Spark job waits for the worker to launch an executor JVM)."""
CELL_TIMEOUT = CELL_GUARD_FACTOR * CLASS_NOTEBOOK_SECONDS
"""A cell's guard against a hang: as ``eoslab._timeouts.cell_guard`` gives a measured cell, the guard factor times
its measured time, here bounded by the whole notebook's (no cell of it takes longer than all of them). A flat 120 s
cut the first Spark job's cell on a machine at load ~28 (133 s for the whole notebook)."""


@dataclass
class Standalone:
    url: str  # spark://host:port
    ui: str  # the master's web UI, whose /json/ is its state
    env: dict[str, str]
    work: Path  # the worker's folder: one sub-folder per application, one per executor it launched

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=10) as resp:
            data: dict[str, Any] = json.loads(resp.read())
            return data


def _daemon(env: dict[str, str], *args: str) -> None:
    script = Path(env["SPARK_HOME"]) / "sbin" / "spark-daemon.sh"
    proc = subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    """A master and one worker (2 cores, 1 GB for executors), started from PySpark's script and stopped by it."""
    import pyspark

    home = tmp_path_factory.mktemp("spark-standalone")
    env = {
        **os.environ,
        "SPARK_HOME": str(Path(pyspark.__file__).parent),
        "JAVA_HOME": str(Path(_java.java_executable()).resolve().parent.parent),
        "SPARK_LOCAL_IP": LOOPBACK,
        "SPARK_LOG_DIR": str(home / "logs"),
        "SPARK_PID_DIR": str(home / "pids"),
        "SPARK_WORKER_DIR": str(home / "work"),  # else the executors' folders go into the installed pyspark
        "SPARK_IDENT_STRING": f"eoslab-test-{os.getpid()}",
        "PYSPARK_PYTHON": sys.executable,  # the executors' Python: the kit's, as the driver's
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",  # its REST server takes a fixed port, 6066
    }
    port, ui, worker_ui = free_port(), free_port(), free_port()
    cluster = Standalone(f"spark://{LOOPBACK}:{port}", f"http://{LOOPBACK}:{ui}", env, home / "work")
    try:
        _daemon(env, "start", MASTER, "1", "--host", LOOPBACK, "--port", str(port), "--webui-port", str(ui))
        worker = ["--host", LOOPBACK, "--webui-port", str(worker_ui), "--cores", "2", "--memory", "1g", cluster.url]
        _daemon(env, "start", WORKER, "1", *worker)
        wait_until(
            lambda: _alive_workers(cluster) == 1,
            timeout=120,  # two JVMs on 2 busy cores: 10-40 s here
            what=f"the Spark master at {cluster.url} to count one ALIVE worker",
            describe=lambda: "\n".join(p.read_text()[-1500:] for p in sorted((home / "logs").glob("*.out"))),
        )
        yield cluster
    finally:
        for cls in (WORKER, MASTER):
            subprocess.run(
                ["bash", str(Path(env["SPARK_HOME"]) / "sbin" / "spark-daemon.sh"), "stop", cls, "1"],
                env=env,
                capture_output=True,
                timeout=120,
            )


def _alive_workers(cluster: Standalone) -> int:
    try:
        return sum(1 for w in cluster.state().get("workers", []) if w.get("state") == "ALIVE")
    except OSError:
        return 0  # the master's UI is not up yet


def _nbval(notebook: Path, cluster: Standalone, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", str(notebook), "--nbval-lax", "--nbval-current-env"]
    argv += [f"--nbval-cell-timeout={CELL_TIMEOUT}", "--noconftest", "-p", "no:cacheprovider", "-q", "--no-header"]
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "EOSLAB_SPARK_MASTER": cluster.url, **env}
    environ["PYSPARK_PYTHON"] = sys.executable
    return subprocess.run(argv, cwd=cwd, env=environ, capture_output=True, text=True, timeout=900)


def _executors(cluster: Standalone, name: str) -> list[Path]:
    """The executors the worker launched for the applications called ``name`` (the master's account of them)."""
    state = cluster.state()
    apps = [a["id"] for a in state.get("completedapps", []) + state.get("activeapps", []) if a.get("name") == name]
    return [e for app in apps for e in sorted((cluster.work / app).glob("*")) if (e / "stderr").is_file()]


def _class(folder: Path) -> Path:
    """A class of four learners, each a folder with generated module-06 runs (as ``eoslab grade --class`` takes)."""
    from eoslab.analysis import generate_class

    generated = folder / "generated"
    generate_class(generated, learners=4, noise=0.02)
    klass = folder / "class"
    for learner in sorted(generated.iterdir()):
        shutil.copytree(learner, klass / learner.name / "runs")
    return klass


def test_the_class_notebook_runs_on_a_standalone_spark(standalone: Standalone, tmp_path: Path) -> None:
    notebook = ROOT / "instructor" / "class_runs.ipynb"
    proc = _nbval(notebook, standalone, tmp_path, EOSLAB_CLASS=str(_class(tmp_path)))
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert _executors(standalone, "eoslab-class"), standalone.state()  # the class's runs were read on the worker


READ = """
import sys
from eoslab import analysis as A
spark = A.spark_session(sys.argv[1])
rows = A.read_topic(spark, sys.argv[2], sys.argv[3], "read_committed").count()
print("rows", rows)
"""


def test_module_06s_kafka_reads_run_on_a_standalone_spark_with_the_source_on_its_executors(
    standalone: Standalone, cluster: Any, topic_name: str, tmp_path: Path
) -> None:
    """Module 06's reads of Kafka (``read_topic``, ``audit_outputs``: all through ``kafka_source``) in a session on
    the standalone master: the records are read by an executor on the worker, which fetched the Spark Kafka source's
    jars from the driver (``spark.jars``). Module 06's Parquet reads are what the class notebook's test runs there."""
    from confluent_kafka import Producer

    cluster.admin.create_topic(topic_name, partitions=2)  # the brokers create no topic on first use
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers(), "enable.idempotence": True})
    produce_all(producer, topic_name, [f"{i}".encode() for i in range(7)])
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYSPARK_PYTHON": sys.executable}
    argv = [sys.executable, "-c", READ, standalone.url, cluster.bootstrap_servers(), topic_name]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "rows 7" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    executors = _executors(standalone, "eoslab")  # the session was the standalone cluster's
    assert executors, standalone.state()
    fetched = [e for e in executors if "spark-sql-kafka" in (e / "stderr").read_text(errors="replace")]
    assert fetched, "no executor fetched the Spark Kafka source's jar from the driver"
