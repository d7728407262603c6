"""A class-data-sharing archive of Kafka's classes: six JVMs start ~30 % faster.

Each node JVM loads and verifies ~8,000 classes at start-up; on 2 cores, with
six JVMs starting together, that is most of the cold-start time. A dynamic
AppCDS archive (JDK 13+, ``-XX:ArchiveClassesAtExit``) records the classes a
real node loaded, and every later JVM maps them instead (measured here: cold
start 19.6-20.8 s without, 12.8-14.7 s with, under the same load).

The archive is made once per (Kafka release, Java version, classpath) by
running ONE throw-away combined broker+controller node on free ports in a temp
folder, driving a transactional produce, a consume and a topic creation
through it so those classes are loaded too, then stopping it cleanly (the
archive is written at exit). If anything goes wrong the kit starts without it:
the archive is an optimisation, never a requirement. ``EOSLAB_CDS=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from eoslab import _java
from eoslab._librdkafka import KIT
from eoslab._paths import cache_dir
from eoslab._ports import LOOPBACK, free_port
from eoslab._procs import KILL_WAIT
from eoslab._wait import wait_until
from eoslab.errors import WaitTimeout
from eoslab.topology import CLUSTER_ID, KAFKA_VERSION, role_jvm_flags

log = logging.getLogger(__name__)

FORMAT_TIMEOUT = 120.0
"""kafka-storage format: one JVM start (1-3 s) and a few files; 120 s only on a machine swapping hard."""
EXIT_TIMEOUT = 90.0
"""The throw-away node's clean exit, while it writes the archive (~100 MB of class data): ~10 s here."""
CONSUME_TIMEOUT = 20.0
"""The warm-up consumer joins its group (``group.initial.rebalance.delay.ms`` default 3 s) and fetches."""


def archive_path(classpath: str) -> Path:
    java = _java.java_executable()
    digest = hashlib.sha256(f"{java}\n{classpath}".encode()).hexdigest()[:10]
    return cache_dir() / f"kafka-{KAFKA_VERSION}-java{_java.java_major(java)}-{digest}.jsa"


def _exercise(bootstrap: str) -> None:
    """Load the classes of the paths the course uses: create a topic, a transaction, a consume."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    common: dict[str, Any] = {"bootstrap.servers": bootstrap, "logger": KIT}
    admin = AdminClient(common)
    admin.create_topics([NewTopic("cds", 1, 1)])["cds"].result(30)
    p = Producer({**common, "transactional.id": "cds"})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce("cds", b"v")
    p.commit_transaction(30)
    c = Consumer({**common, "group.id": "cds", "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    c.subscribe(["cds"])
    try:  # the consumer's classes are loaded by now; the record itself is a bonus
        wait_until(lambda: c.poll(1.0) is not None, timeout=CONSUME_TIMEOUT, interval=0, what="the warm-up record")
    except WaitTimeout:
        pass
    c.close()


STEPS = ("format a throw-away node", "start it", "drive a transaction through it", "stop it: write the archive")


def _node_properties(work: Path, client: int, ctrl: int) -> str:
    """The throw-away node: broker and controller in one, on free ports, every internal topic at one replica."""
    return (
        "node.id=1\nprocess.roles=broker,controller\n"
        f"controller.quorum.voters=1@{LOOPBACK}:{ctrl}\ncontroller.listener.names=CONTROLLER\n"
        f"listeners=PLAINTEXT://{LOOPBACK}:{client},CONTROLLER://{LOOPBACK}:{ctrl}\n"
        f"advertised.listeners=PLAINTEXT://{LOOPBACK}:{client}\nlog.dirs={work / 'data'}\n"
        "offsets.topic.replication.factor=1\noffsets.topic.num.partitions=1\n"
        "transaction.state.log.replication.factor=1\ntransaction.state.log.min.isr=1\n"
        "transaction.state.log.num.partitions=1\n"
    )


def _format(java: str, classpath: str, props: Path) -> bool:
    """kafka-storage format of the throw-away node's folder; False when the tool refused."""
    fmt = subprocess.run(
        [java, "-cp", classpath, "kafka.tools.StorageTool", "format", "-t", CLUSTER_ID, "-c", str(props)],
        capture_output=True,
        text=True,
        timeout=FORMAT_TIMEOUT,
    )
    return fmt.returncode == 0


def _start_node(java: str, classpath: str, props: Path, archive: Path, log_file: Path) -> subprocess.Popen[bytes]:
    """The node's JVM, told to write the classes it loaded to ``archive`` when it exits; its output to ``log_file``."""
    with log_file.open("w") as out:
        return subprocess.Popen(
            [
                java,
                *role_jvm_flags("broker").split(),
                "-Xmx512m",
                f"-XX:ArchiveClassesAtExit={archive}",
                "-Xlog:cds=off",
                "-Xlog:cds+dynamic=off",
                "-cp",
                classpath,
                "kafka.Kafka",
                str(props),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def create_archive(classpath: str, target: Path, timeout: float = EXIT_TIMEOUT, on_step: Any = None) -> bool:
    """Record the archive; ``on_step(i)`` is called as each of :data:`STEPS` begins."""
    step = on_step or (lambda i: None)
    java = _java.java_executable()
    work = Path(tempfile.mkdtemp(prefix="eoslab-cds-"))
    proc = None
    try:
        client, ctrl = free_port(), free_port()
        props = work / "node.properties"
        props.write_text(_node_properties(work, client, ctrl))
        step(0)
        if not _format(java, classpath, props):
            return False
        tmp = target.with_suffix(".tmp")
        step(1)
        proc = _start_node(java, classpath, props, tmp, work / "node.log")
        step(2)
        _exercise(f"{LOOPBACK}:{client}")
        step(3)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=timeout)
        if tmp.is_file() and tmp.stat().st_size > 0:
            tmp.replace(target)
            return True
        return False
    except Exception as exc:  # noqa: BLE001 - an optimisation: report and carry on without it
        log.warning("could not create the class-data-sharing archive (%s); nodes start without it", exc)
        return False
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(KILL_WAIT)
        shutil.rmtree(work, ignore_errors=True)


def ensure_archive(classpath: str) -> Path | None:
    """The archive for this classpath, creating it the first time (~20 s). None when disabled or failed."""
    if os.environ.get("EOSLAB_CDS", "1") == "0":
        return None
    target = archive_path(classpath)
    if target.is_file():
        return target
    from eoslab._progress import progress_bar

    print("Preparing a class-data-sharing archive of the Kafka jars (once, ~20 s) ...", flush=True)
    with progress_bar("class-data-sharing archive", total=len(STEPS), unit=" steps", delay=0) as bar:

        def on_step(i: int) -> None:
            bar.set_postfix_str(STEPS[i])
            bar.update(i - bar.n)

        made = create_archive(classpath, target, on_step=on_step)
        bar.update(len(STEPS) - bar.n)
    return target if made else None
