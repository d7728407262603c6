"""Finding a Java 17+ runtime and running Kafka's tools on it."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

from eoslab.errors import SetupError

MIN_JAVA = 17
VERSION_TIMEOUT = 60.0
"""`java -version` starts a JVM: ~0.3 s; a minute only on a machine swapping hard."""


@functools.lru_cache(maxsize=1)
def java_executable() -> str:
    """The ``java`` to run Kafka with: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    candidates = [str(Path(home) / "bin" / "java")] if home else []
    if found := shutil.which("java"):
        candidates.append(found)
    for java in candidates:
        if os.access(java, os.X_OK):
            major = java_major(java)
            if major >= MIN_JAVA:
                return java
            raise SetupError(
                f"Kafka 4 needs Java {MIN_JAVA} or newer, but {java} is Java {major}: "
                "install a JDK 17+ (e.g. `conda env create -f environment.yml` or your OS's openjdk-17) "
                "and point JAVA_HOME at it."
            )
    raise SetupError(
        f"No Java found: install a JDK {MIN_JAVA}+ (e.g. `conda env create -f environment.yml` "
        "or your OS's openjdk-17), or use the docker backend with EOSLAB_BACKEND=docker."
    )


def javac_executable() -> str:
    """The ``javac`` of the JDK the cluster's ``java`` belongs to (or on PATH): module 03 compiles its
    Java client with it. A JRE alone has none: :class:`SetupError` says what to install."""
    java = Path(java_executable())
    javac = java.with_name("javac")
    if javac.is_file():
        return str(javac)
    found = shutil.which("javac")
    if found is None:
        raise SetupError(
            f"Compiling module 03's Java client needs `javac` (a JDK), but {java} has none beside it: install a "
            "JDK 17+ (e.g. `conda env create -f environment.yml`, or your OS's openjdk-17-jdk) and set JAVA_HOME."
        )
    return found


@functools.lru_cache(maxsize=4)
def java_major(java: str) -> int:
    """The major version of ``java`` (one ``java -version``: a JVM start, so asked once per process)."""
    out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT)
    text = out.stderr + out.stdout
    m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
    if not m:
        raise SetupError(f"Could not read the Java version from `{java} -version`: reinstall the JDK.")
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def first_error_line(text: str) -> str:
    """The one line of a JVM's output that says what went wrong, without the stack trace."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "Exception" in ln or "ERROR" in ln or "Error:" in ln:
            if not ln.startswith("at "):
                return ln[:300]
    return lines[-1][:300] if lines else ""
