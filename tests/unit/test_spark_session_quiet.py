"""The analysis's Spark session starts quietly: a learner's notebook cell shows the result, not the
driver JVM's start-up warnings (NativeCodeLoader's, "Setting default log level to WARN", ...)."""

from __future__ import annotations

import sys
from pathlib import Path

import _early
import pytest

pytestmark = pytest.mark.jvm

SCRIPT = """
from eoslab.analysis import spark_session
spark = spark_session(kafka=False)
print(spark.range(5).count())
spark.stop()
"""


def _session(folder: Path) -> _early.Child:
    return _early.Child([sys.executable, "-c", SCRIPT], timeout=180)


@pytest.mark.early(start=_session)  # a JVM's start: it runs beside the tier's other tests (_early.py)
def test_a_session_prints_its_result_and_no_jvm_warning(early_child: _early.Started) -> None:
    done = early_child.result()
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "5"
    # the JVM itself says this (Spark 4 adds --add-modules jdk.incubator.vector); no log4j setting reaches it
    jvm = "WARNING: Using incubator modules: jdk.incubator.vector"
    noise = [line for line in done.stderr.splitlines() if line.strip() and line.strip() != jvm]
    assert noise == [], "\n".join(noise[:20])
