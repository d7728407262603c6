"""The Kafka jars of the local backend, resolved once with Maven and cached.

``eoslab/_java/kafka/pom.xml`` names what runs (broker, tools, ONE log4j2 binding);
``mvn dependency:build-classpath`` turns it into a classpath of jars in the
Maven cache (~/.m2, kept between runs), and we cache that classpath in
``~/.cache/eoslab``. ``$KAFKA_HOME/libs`` is used instead when set. The Spark
Kafka connector has its own pom and its own classpath: its kafka-clients is
Spark's choice, not the broker's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from eoslab._paths import cache_dir, offline_dir, pom_dir
from eoslab.errors import SetupError
from eoslab.topology import KAFKA_VERSION


def kafka_home_libs() -> Path | None:
    """``$KAFKA_HOME/libs`` when set: it must hold the pinned release (``kafka_2.13-<KAFKA_VERSION>.jar``).

    Another release is refused in one sentence: the kit names tools' classes, parses their output and
    states facts of one release (DumpLogSegments left ``kafka.tools`` in 4.3, the transaction-log
    decoder prints state names from 4.4 on; docs/versions.md lists the rest).
    """
    home = os.environ.get("KAFKA_HOME")
    if not home:
        return None
    libs = Path(home).expanduser() / "libs"
    found = sorted(p.name for p in libs.glob("kafka_2.13-*.jar") if "-test" not in p.name)
    if not found:
        raise SetupError(
            f"KAFKA_HOME={home} has no libs/kafka_2.13-*.jar: unset KAFKA_HOME or point it at a Kafka "
            f"{KAFKA_VERSION} install."
        )
    if f"kafka_2.13-{KAFKA_VERSION}.jar" not in found:
        release = found[0].removeprefix("kafka_2.13-").removesuffix(".jar")
        raise SetupError(
            f"KAFKA_HOME={home} is Kafka {release}, but this kit is built for Kafka {KAFKA_VERSION}: point "
            f"KAFKA_HOME at a Kafka {KAFKA_VERSION} install, or unset it (`make setup` fetches the jars)."
        )
    return libs


def _read_cached(path: Path) -> list[str] | None:
    if not path.is_file():
        return None
    entries = [e for e in path.read_text().strip().split(os.pathsep) if e]
    if entries and all(Path(e).is_file() for e in entries):
        return entries
    return None


BUNDLE_LIST = "classpath.txt"
"""In a workshop bundle, ``.offline/jars/<cache name>/classpath.txt``: the jar names, in classpath order."""


def bundled(cache_name: str) -> list[str] | None:
    """The jars of ``cache_name`` from the workshop bundle, if it has them all."""
    root = offline_dir()
    if root is None:
        return None
    folder = root / "jars" / cache_name.removesuffix(".classpath")
    listing = folder / BUNDLE_LIST
    if not listing.is_file():
        return None
    entries = [str(folder / name) for name in listing.read_text().split() if name]
    return entries if entries and all(Path(e).is_file() for e in entries) else None


def jar_source(cache_name: str) -> str | None:
    """Where :func:`resolve` would take ``cache_name``'s jars from without Maven, or None (Maven needed)."""
    if entries := _read_cached(cache_dir() / cache_name):
        return f"{len(entries)} jars cached ({cache_dir() / cache_name})"
    if entries := bundled(cache_name):
        return f"{len(entries)} jars in the workshop bundle ({Path(entries[0]).parent})"
    return None


def resolve(pom: str, version_props: dict[str, str], cache_name: str) -> list[str]:
    """Resolve one of our poms into a list of jar paths (cached; from the workshop bundle when there is one)."""
    cached = cache_dir() / cache_name
    if entries := _read_cached(cached):
        return entries
    if entries := bundled(cache_name):  # an offline laptop: no Maven, no network
        cached.write_text(os.pathsep.join(entries))
        return entries
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SetupError(
            "Maven (`mvn`) is needed once to fetch the Kafka jars: install it "
            "(`conda env create -f environment.yml`, or your OS's maven package), "
            "or set KAFKA_HOME to an Apache Kafka 4 install, or use EOSLAB_BACKEND=docker."
        )
    tmp = cached.with_suffix(".tmp")
    cmd = [mvn, "-B", "-f", str(pom_dir(pom) / "pom.xml"), "dependency:build-classpath", f"-Dmdep.outputFile={tmp}"]
    cmd += [f"-D{k}={v}" for k, v in version_props.items()]
    returncode, output = _run_maven(cmd, f"Maven: fetching the {pom} jars (once)")
    if returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-15:])
        raise SetupError(f"Maven could not resolve eoslab/_java/{pom}/pom.xml (is Maven Central reachable?):\n{tail}")
    tmp.replace(cached)
    entries = _read_cached(cached)
    if not entries:
        raise SetupError(f"Maven wrote an empty classpath for eoslab/_java/{pom}/pom.xml: delete {cached} and retry.")
    return entries


def _run_maven(cmd: list[str], desc: str) -> tuple[int, str]:
    """Run Maven, counting the files it downloads on a progress bar (a first run fetches ~100 MB)."""
    from eoslab._progress import progress_bar

    lines: list[str] = []
    with progress_bar(desc, unit=" files") as bar:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "Downloaded from" in line:
                bar.update(1)
            else:
                bar.update(0)  # elapsed time moves even while Maven thinks
        proc.wait()
    return proc.returncode, "".join(lines)


def kafka_jars() -> list[str]:
    """Every jar the brokers, controllers and Kafka CLI tools need."""
    if libs := kafka_home_libs():
        return sorted(str(p) for p in libs.glob("*.jar"))
    return resolve("kafka", {"kafka.version": KAFKA_VERSION}, f"kafka-{KAFKA_VERSION}.classpath")


def kafka_classpath() -> str:
    return os.pathsep.join(kafka_jars())


def kafka_clients_jar() -> Path:
    """The kafka-clients jar: its ``common/message/*.json`` drive the protocol codec."""
    for jar in kafka_jars():
        name = Path(jar).name
        if name.startswith("kafka-clients-") and name.endswith(".jar"):
            return Path(jar)
    raise SetupError("No kafka-clients jar among the Kafka jars: run `make setup` again.")


def check_single_log4j_binding(jars: list[str]) -> None:
    """Two slf4j bindings make every JVM print a warning and pick one at random."""
    bindings = [
        j
        for j in jars
        if any(
            b in Path(j).name
            for b in (
                "slf4j-reload4j",
                "slf4j-log4j12",
                "log4j-slf4j-impl",
                "log4j-slf4j2-impl",
                "logback-classic",
                "slf4j-simple",
            )
        )
    ]
    if len(bindings) != 1:
        raise SetupError(
            f"Expected exactly one slf4j binding among the Kafka jars, found {bindings}: "
            "fix eoslab/_java/kafka/pom.xml."
        )


SPARK_KAFKA_ARTIFACT = "org.apache.spark:spark-sql-kafka-0-10_2.13"


def _pyspark_jar_names() -> set[str]:
    """Artifact names (version stripped) of the jars the PySpark wheel already ships."""
    import re

    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    return {re.sub(r"-\d[\w.\-]*\.jar$", "", p.name) for p in jars.glob("*.jar")}


def spark_kafka_jars(spark_version: str | None = None) -> list[str]:
    """The Spark Kafka source for ``spark.jars``: ``eoslab/_java/spark/pom.xml`` at exactly PySpark's version.

    Its own pom and classpath cache, apart from :func:`kafka_jars`: Spark brings the
    kafka-clients it was built with. Jars the PySpark wheel already has (scala
    collections, lz4, snappy) are left out, so one class never comes from two jars.
    """
    import re

    if spark_version is None:
        import pyspark

        spark_version = pyspark.__version__
    try:
        jars = resolve("spark", {"spark.version": spark_version}, f"spark-kafka-{spark_version}.classpath")
    except SetupError as exc:
        raise SetupError(
            f"{SPARK_KAFKA_ARTIFACT}:{spark_version} (the Spark Kafka source for the installed PySpark) "
            f"did not resolve: install the PySpark pinned in pyproject.toml, then `make setup` ({exc})"
        ) from None
    shipped = _pyspark_jar_names()
    return [j for j in jars if re.sub(r"-\d[\w.\-]*\.jar$", "", Path(j).name) not in shipped]
