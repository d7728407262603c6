"""The README's two commands in order: a learner's course open (`make lab`: the cluster at offset 0 and JupyterLab on
8888), then `make test` — here its orchestration (tests/suite.py) running the cluster tier's kill, pause, heal and
new-topic tests. The suite must take ports of its own and leave the learner's cluster as it was: the same node
processes, the same topics with the same end offsets, the same partition folders, JupyterLab still answering.

The learner's cluster is a stand-in started here the way `make lab` starts it (``eoslab up``, ``eoslab lab``), with
its data in a folder of this test; a topic of the learner's own holds ten records.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from eoslab._ports import is_free
from eoslab._wait import wait_until
from eoslab.topology import Topology
from tests import learner_guard
from tests.integration._produce import produce_all

pytestmark = pytest.mark.learner

ROOT = Path(__file__).resolve().parents[2]
LEARNER = Topology(port_offset=0)
INNER = [
    "tests/integration/test_cluster.py::test_heal_restores_the_seed_arrangement_after_kill_and_pause",
    "tests/integration/test_cluster.py::test_a_new_topic_gets_rf3_and_min_isr_2",
]
TOPIC = "my-orders"


def _env(data: Path) -> dict[str, str]:
    """The learner's shell: no offset of the suite's, their own data folder, the local backend."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EOSLAB_", "PYTEST_"))}
    return {**env, "EOSLAB_BACKEND": "local", "EOSLAB_DATA": str(data), "EOSLAB_PORT_OFFSET": "0"}


def _eoslab(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "eoslab.cli", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def _docker_engine() -> str | None:
    """The Docker engine that answers here (its pid file's pid, or "answers"), None when none does.

    The pid files: ``tools/system/docker.sh``'s dockerd, or dockerd's default (systemd, a desktop engine)."""
    if shutil.which("docker") is None:
        return None
    info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, timeout=30)
    if info.returncode != 0:
        return None
    pidfiles = [p for p in (Path("/var/run/eoslab-dockerd.pid"), Path("/var/run/docker.pid")) if p.exists()]
    return pidfiles[0].read_text().strip() if pidfiles else "answers"


def _lab_answers() -> bool:
    """JupyterLab answers on 8888 (403 without the learner's token: an answer all the same)."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:8888/api/status", timeout=5):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def _end_offsets() -> dict[int, int]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{LEARNER.brokers[0].client_port}", "group.id": "guard"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(TOPIC, p), timeout=15)[1] for p in (0, 1)}
    finally:
        consumer.close()


def _learners_work() -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    bootstrap = f"127.0.0.1:{LEARNER.brokers[0].client_port}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the answer: its futures die with it
    admin.create_topics([NewTopic(TOPIC, 2, 3)])[TOPIC].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    produce_all(producer, TOPIC, [{"value": f"order {i}".encode(), "partition": i % 2} for i in range(10)])


@pytest.fixture
def learners_course(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """The stand-in: `make lab`'s cluster at offset 0 and its JupyterLab on 8888; stopped at the end, by its pids."""
    if not all(is_free(p) for p in [*LEARNER.all_ports(), 8888]):
        pytest.skip(
            "a cluster or JupyterLab already runs on a learner's ports here: `make test` guards it (tests/suite.py)"
        )
    data = tmp_path / "kafka-data"
    env = _env(data)
    lab = None
    try:
        up = _eoslab(env, "up")
        assert up.returncode == 0, up.stderr
        lab = subprocess.Popen(
            [sys.executable, "-m", "eoslab.cli", "lab", "--no-browser", "--port=8888", "--ServerApp.port_retries=0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(
            lambda: _lab_answers() or (lab.poll() is not None and pytest.fail(f"JupyterLab exited ({lab.returncode})")),
            timeout=120,
            interval=0.5,
            what="the learner's JupyterLab on 8888",
        )
        _learners_work()
        yield env, data
    finally:
        if lab is not None:
            lab.terminate()
            lab.wait(30)
        _eoslab(env, "down")


# Its own guard: a cluster of the learner's and one of the suite's started and stopped, and the tests between
# (~25 s each start, ~40 s of tests on the quiet 2-core machine).
@pytest.mark.timeout(600)
def test_make_test_beside_a_learners_open_course_leaves_it_as_it_was(learners_course):
    env, data = learners_course
    before, offsets = learner_guard.snapshot(0, data), _end_offsets()
    assert before is not None and before.backend == "local" and TOPIC in before.topics and len(before.nodes) == 6
    assert sum(offsets.values()) == 10
    engine = _docker_engine()  # the system tier's, which the inner run's `docker.sh stop` must leave running
    inner = {**env, "CLUSTER_WORKERS": "0"}
    run = subprocess.run(
        [sys.executable, "-m", "tests.suite", "cluster", "--", *INNER],
        cwd=ROOT,
        env=inner,
        capture_output=True,
        text=True,
        timeout=540,
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert f"your local cluster at offset 0 ({data}) runs: the suite leaves it alone." in out
    base = int(re.search(r"the suite's clusters at port offset (\d+)", out).group(1))  # type: ignore[union-attr]
    assert base != 0 and "3 passed" in out  # the heal test twice (python, cli), the new topic once
    after = learner_guard.snapshot(0, data)
    assert learner_guard.changes(before, after) == []  # same pids, topics (none added), partition folders
    assert _end_offsets() == offsets
    assert _lab_answers()
    assert _docker_engine() == engine
