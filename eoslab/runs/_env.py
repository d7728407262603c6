"""The ``env`` row of a run: the machine, the versions, the backend, how busy it was."""

from __future__ import annotations

import getpass
import os
import platform
import subprocess
from typing import Any

import confluent_kafka
import psutil

from eoslab import _java
from eoslab.runs._schema import FORMAT
from eoslab.topology import KAFKA_VERSION

JAVA_VERSION_TIMEOUT = 20.0
"""`java -version` starts a JVM: ~0.3 s, seconds on a busy laptop."""


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _java_version() -> str:
    try:
        out = subprocess.run(
            [_java.java_executable(), "-version"], capture_output=True, text=True, timeout=JAVA_VERSION_TIMEOUT
        )
        return (out.stderr or out.stdout).splitlines()[0].strip()
    except Exception:  # noqa: BLE001 - the fingerprint says "unknown" rather than failing a run
        return "unknown"


def describe_machine() -> str:
    """One line: cores, CPU, memory, OS (printed above every benchmark's figures)."""
    mem = psutil.virtual_memory().total / 2**30
    return f"{os.cpu_count()} cores ({_cpu_model()}), {mem:.0f} GiB, {platform.system()} {platform.release()}"


def fingerprint(run_id: str, backend: str, matrix: str, rounds: int = 1, seconds: float = 0.0) -> dict[str, Any]:
    """The ``env`` row of a run: who, where, on what, how busy the machine was, and the run's shape."""
    import pandas as pd

    load1, _, _ = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "run_id": run_id,
        "format": FORMAT,
        "learner": os.environ.get("EOSLAB_LEARNER") or getpass.getuser(),
        "started_at": pd.Timestamp.now(tz="UTC"),
        "matrix": matrix,
        "rounds": rounds,
        "seconds": float(seconds),
        "cpu": _cpu_model(),
        "cores": os.cpu_count() or 0,
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "kafka_version": KAFKA_VERSION,
        "client": "confluent-kafka",
        "client_version": confluent_kafka.version()[0],
        "librdkafka_version": confluent_kafka.libversion()[0],
        "java": _java_version(),
        "backend": backend,
        "load1_at_start": round(load1, 2),  # a loaded machine makes noisy figures: keep the evidence
    }
