"""A small, quiet Spark session: the analysis must not drown a notebook in JVM logs.

``local[2]`` by default (two cores is the course's laptop), configurable with the
``master`` argument or ``$EOSLAB_SPARK_MASTER``: nothing below assumes local mode,
the runs are read by path and the Kafka source by bootstrap servers.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from eoslab import _java
from eoslab._jars import spark_kafka_jars
from eoslab._ports import LOOPBACK

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MASTER_ENV = "EOSLAB_SPARK_MASTER"
LOG4J_CONFIG = Path(__file__).resolve().parent.parent / "_resources" / "log4j2-spark.xml"
SCRATCH_PREFIX = "eoslab-spark-"


def scratch_dir(root: Path | None = None) -> Path:
    """This process's folder for Spark's local files (``spark.local.dir``: its ``spark-*`` folder with copies of
    the Kafka jars, ``blockmgr-*``) and its driver JVM's temporary files (the compression libraries it unpacks),
    deleted when the process exits. Spark deletes its own only when its JVM ends normally; a kernel stopped with
    its JVM left ~10 MB in the temporary folder per session (632 MB of them on the test machine). So the folders
    of processes that are gone are deleted here first."""
    import psutil

    root = root or Path(tempfile.gettempdir())
    for old in root.glob(f"{SCRATCH_PREFIX}*"):
        pid = old.name.removeprefix(SCRATCH_PREFIX)
        if pid.isdigit() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    mine = root / f"{SCRATCH_PREFIX}{os.getpid()}"
    if not mine.is_dir():
        mine.mkdir(parents=True)
        atexit.register(shutil.rmtree, mine, True)
    return mine


SPARK_JIT_ENV = "EOSLAB_SPARK_JIT"


def _jit_flags() -> str:
    """`` -XX:TieredStopAtLevel=1`` when ``$EOSLAB_SPARK_JIT`` is ``c1`` (the test suite's short jobs: C2's compile
    work costs more CPU than it saves there); a learner's session keeps C2."""
    return " -XX:TieredStopAtLevel=1" if os.environ.get(SPARK_JIT_ENV, "").strip().lower() == "c1" else ""


def spark_session(master: str | None = None, *, kafka: bool = True, app: str = "eoslab") -> SparkSession:
    """The session of notebook 06 and lab 06; ``kafka=True`` puts the Spark Kafka source on ``spark.jars``.

    The connector's jars were resolved by ``make setup`` (``eoslab setup``) into their own
    cached classpath; nothing is downloaded here, and a missing connector is one sentence.
    """
    from pyspark.sql import SparkSession

    if "JAVA_HOME" not in os.environ:  # PySpark finds Java by JAVA_HOME or PATH: use the one the brokers use
        os.environ["JAVA_HOME"] = str(Path(_java.java_executable()).resolve().parent.parent)
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)  # loopback, like the cluster (and no hostname warning)
    import warnings

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    scratch = scratch_dir()
    builder = (
        SparkSession.builder.master(master or os.environ.get(MASTER_ENV) or "local[2]")
        .appName(app)
        .config("spark.ui.enabled", "false")  # no web UI on a learner's laptop
        .config("spark.ui.showConsoleProgress", "false")  # no [Stage 3:>] bars in notebook cells
        .config("spark.sql.shuffle.partitions", "2")  # default 200: 200 tiny tasks per groupBy on 2 cores
        # Adaptive query execution re-plans a query between its stages (skewed joins, coalescing partitions): nothing
        # to gain on a course's thousands of rows in 2 partitions, and its extra planning and jobs cost time
        # (tests/unit/test_analysis_runs.py: 88-92 s without it, 113-116 s with it, on this kit's 2-core machine).
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .config("spark.local.dir", str(scratch))
        # errors only from the driver JVM's first line: no NativeCodeLoader warning, no "Setting default log level"
        # as a file: URI, so a folder name with a space cannot split the option (nor the scratch folder's: no space)
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()} -Djava.io.tmpdir={scratch}{_jit_flags()}",
        )
    )
    if kafka:
        builder = builder.config("spark.jars", ",".join(spark_kafka_jars()))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
