"""The Java 4.4 producer, driven from Python: the client that speaks transaction version 2 (KIP-890).

librdkafka 2.x (confluent-kafka) speaks the original transaction protocol; the
Java client of the pinned release reads ``transaction.version=2`` from the
broker's ApiVersions answer and switches by itself. A lesson that puts both
side by side needs the Java client, so :class:`JavaProducer` runs one
``KafkaProducer`` in a child JVM (``eoslab/_java/txnclient/TxnClient.java``,
compiled once with ``javac`` into the cache) and talks to it in JSON lines,
like :class:`eoslab.faults.ZombieProducer` talks to a librdkafka child.

Why a child JVM and not JPype (an in-process JVM):

- a kernel runs ONE JVM for its life with JPype: it cannot be restarted, and its
  classpath is fixed at the first start, so re-running a notebook's setup cell
  must skip the start and a changed classpath needs a kernel restart. A child
  process is started fresh by each run and ended by ``eoslab.heal`` (its pid
  file is in the clients folder), like the zombie producer;
- the Java client's threads, its logging and a hang stay out of the kernel,
  and the child can be frozen with SIGSTOP like any zombie;
- no native Python dependency: the learner's JDK 17+ (the README's
  prerequisite, also in ``environment.yml``) and the kafka-clients jar the kit
  already resolved are all it needs. The cost is one JVM start (~1 s) per producer
  and one ``javac`` (~2 s) the first time.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

from eoslab import _procs
from eoslab._linechild import LineChild
from eoslab._paths import PACKAGE_DIR, cache_dir, clients_dir
from eoslab.errors import ClientError, SetupError
from eoslab.topology import KAFKA_VERSION

SOURCE = PACKAGE_DIR / "_java" / "txnclient" / "TxnClient.java"
CALL_TIMEOUT = 90.0  # above the Java client's own max.block.ms (60 s) and delivery.timeout.ms (120 s is its default;
# the lesson sets 30 s), so the client's own error comes back before ours
LOG4J_CONFIG = PACKAGE_DIR / "_resources" / "log4j2-tools.xml"  # warnings and errors only, on stderr


MAIN_CLASS = "TxnClient"
"""The child's command line holds this: :func:`end_java_producers` signals nothing else."""


def pid_dir() -> Path:
    """The Java producers' pid files: a folder of their own (the zombies' clean-up owns ``clients_dir()``)."""
    path = clients_dir() / "java"
    path.mkdir(parents=True, exist_ok=True)
    return path


def end_java_producers() -> list[int]:
    """End every Java producer a lesson started and left running (``eoslab.heal`` calls this)."""
    return _procs.end_pid_files(pid_dir(), expect=MAIN_CLASS)


class JavaClientError(ClientError):
    """The Java producer's child process failed, or did not answer."""


def client_classpath() -> str:
    """The pinned kafka-clients jar with its dependencies, and the compiled helper in front."""
    from eoslab._jars import kafka_jars

    return os.pathsep.join([str(compiled_dir()), *kafka_jars()])


def compiled_dir() -> Path:
    """Where ``TxnClient.class`` lives, compiled from the shipped source once (keyed by its hash)."""
    from eoslab._jars import kafka_clients_jar
    from eoslab._java import javac_executable

    # Keyed by the source and the pinned release: a class compiled against another kafka-clients is not reused.
    digest = hashlib.sha256(SOURCE.read_bytes() + KAFKA_VERSION.encode()).hexdigest()[:12]
    out = cache_dir() / f"txnclient-{digest}"
    if (out / "TxnClient.class").is_file():
        return out
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [javac_executable(), "-nowarn", "-d", str(tmp), "-cp", str(kafka_clients_jar()), str(SOURCE)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        from eoslab._java import first_error_line

        raise SetupError(f"javac could not compile {SOURCE.name}: {first_error_line(proc.stderr + proc.stdout)}")
    try:
        tmp.rename(out)
    except OSError:  # another process compiled it meanwhile: theirs is as good
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return out


class JavaProducer(LineChild):
    """One Java ``KafkaProducer`` (the pinned 4.4 client) in a child JVM.

    ``config`` is keyed by the JAVA client's property names (``transactional.id``,
    ``linger.ms`` ...). Every method waits for the child's answer and returns it as
    a dict: ``{"ok": True, ...}``, or ``{"ok": False, "error": "ProducerFencedException",
    "message": ...}`` -- the Java exception's simple name, never a stack trace.
    """

    what = "The Java producer"
    error = JavaClientError

    def __init__(self, config: dict[str, Any], name: str = "java-producer") -> None:
        super().__init__(name)
        self.config = dict(config)  # the client's WARN/ERROR lines go to self.log

    def _pid_file(self) -> Path:
        return pid_dir() / f"{self.name}-{self.pid}.pid"

    def start(self) -> JavaProducer:
        if self.proc is not None:
            return self
        from eoslab._java import java_executable

        argv = [
            java_executable(),
            "-XX:TieredStopAtLevel=1",  # a short-lived client: C1 only, like the kit's CLI tools
            "-XX:+UseSerialGC",
            "-Xmx128m",
            f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
            "-cp",
            client_classpath(),
            MAIN_CLASS,
            *(f"{k}={v}" for k, v in self.config.items()),
        ]
        self._spawn(argv)
        ready = self._answer(60.0)  # the JVM starts and builds the KafkaProducer
        if not ready.get("ok"):
            self.stop()
            raise JavaClientError(f"The Java producer {self.name!r} did not start: {ready.get('message')}.")
        return self

    def call(self, *fields: Any, timeout: float = CALL_TIMEOUT) -> dict[str, Any]:
        """Send one command (see the Java source) and wait for its answer."""
        text = "\t".join(str(f) for f in fields)
        if "\n" in text:
            raise JavaClientError("A command to the Java producer cannot contain a newline.")
        self._write(text)
        return self._answer(timeout)

    # -- the transactional API, by its Java names' meaning ------------------------------
    def init_transactions(self) -> dict[str, Any]:
        return self.call("init")

    def begin_transaction(self) -> dict[str, Any]:
        return self.call("begin")

    def send(self, topic: str, partition: int, value: str) -> dict[str, Any]:
        """Queue one record (``send()`` returns a Future in Java; :meth:`flush` reports them)."""
        return self.call("send", topic, partition, value)

    def flush(self) -> dict[str, Any]:
        return self.call("flush")

    def send_offsets_to_transaction(
        self, group: str, topic: str, partition: int, offset: int, member: tuple[str, int] | None = None
    ) -> dict[str, Any]:
        """``member``: (member id, generation or KIP-848 member epoch) for metadata the group coordinator checks
        (KIP-447); without it, ``new ConsumerGroupMetadata(group)``, which it does not check."""
        return self.call("offsets", group, topic, partition, offset, *(member or ()))

    def commit_transaction(self) -> dict[str, Any]:
        return self.call("commit")

    def abort_transaction(self) -> dict[str, Any]:
        return self.call("abort")

    def producer_id_and_epoch(self) -> dict[str, Any]:
        """What the client holds now (read from its TransactionManager: there is no public getter)."""
        return self.call("id")

    # -- life ---------------------------------------------------------------------------------
    def stop(self) -> None:
        """Close the producer (briefly) and end the JVM; remove its pid file."""
        proc = self.proc
        if proc is None:
            return
        try:
            if not self.frozen and proc.poll() is None:
                self.call("exit", timeout=10.0)
        except (JavaClientError, OSError, ValueError):
            pass
        self._end()

    def __enter__(self) -> JavaProducer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
