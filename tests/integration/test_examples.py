"""examples/ on the cluster, each program run as a learner runs it (one command), each under one fault:

- idempotent_producer.py: the proxy loses a Produce answer; the resent batch is written once;
- transactional_producer.py: the proxy loses EndTxn's answer; the commit is resent and the records read once;
- read_committed_consumer.py: the proxy loses a Fetch answer; read_committed still returns the committed
  records only, read_uncommitted the aborted ones too;
- eos_loop.py: SIGKILL in the middle of a transaction (outputs acknowledged, not committed), a restart with the
  same transactional.id and group; the kit's history checker judges both incarnations' --history files:
  0 duplicates, 0 lost writes, 0 missing outputs;
- java/EosLoop.java (Kafka's Java client): SIGKILL with a transaction open (its sends made, its commit not), a
  restart: read_committed holds each input's output once.

The programs run as child processes of the test, through `sys.executable`, as the notebooks run them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Producer

from eoslab import history as hist
from eoslab._wait import wait_until
from tests.integration._produce import produce_all

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
pytestmark = [pytest.mark.cluster]

RESEND_MS = 3000
"""socket.timeout.ms given with -X: librdkafka resends a request whose answer never came after this long
(its default, 60 s, would make every fault cost a minute)."""
RUN_TIMEOUT = 90
"""One program's run: its own calls are bounded by 30 s (transactional) and 60 s (flush)."""


def example(name: str, *args: str, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def values(cluster, topic: str, isolation: str) -> Counter[str | None]:
    return Counter(r.value for r in hist.read_final(cluster, topic, isolation).records)


def test_idempotent_producer_writes_a_resent_batch_once(cluster, proxy):
    topic, cid = fresh("ex-idem"), fresh("ex-idem")
    cluster.admin.create_topic(topic, partitions=1)
    with proxy.drop_response(api="Produce", client_id=cid, partition=0) as fault:
        out = example(
            "idempotent_producer.py", "--bootstrap-servers", cluster.bootstrap_servers(proxied=True),
            "--topic", topic, "--partition", "0", "--count", "3",
            "-X", f"client.id={cid}", "-X", f"socket.timeout.ms={RESEND_MS}",
        ).stdout  # fmt: skip
        assert fault.fired == 1
    rows = proxy.trace(client_id=cid, api="Produce").flat()
    sequences = [r["base_sequence"] for r in rows if r.get("base_sequence") is not None]
    assert len(sequences) > len(set(sequences)), f"no batch was resent: {sequences}"
    assert "3 of 3 records written" in out, out
    assert values(cluster, topic, "read_uncommitted") == Counter(f"record {i}" for i in range(3))


def test_transactional_producer_commits_once_when_endtxns_answer_is_lost(cluster, proxy):
    topic, cid = fresh("ex-txn"), fresh("ex-txn")
    cluster.admin.create_topic(topic, partitions=1)
    with proxy.drop_response(api="EndTxn", client_id=cid) as fault:
        out = example(
            "transactional_producer.py", "--bootstrap-servers", cluster.bootstrap_servers(proxied=True),
            "--topic", topic, "--transactional-id", cid, "--count", "3",
            "-X", f"client.id={cid}", "-X", f"socket.timeout.ms={RESEND_MS}",
        ).stdout  # fmt: skip
        assert fault.fired == 1
    assert len(proxy.trace(client_id=cid, api="EndTxn")) >= 2, "EndTxn was not resent"
    assert "3 records in one transaction" in out and "COMMITTED" in out, out
    assert values(cluster, topic, "read_committed") == Counter(f"txn record {i}" for i in range(3))


def test_read_committed_consumer_skips_an_aborted_transaction_through_a_lost_fetch(cluster, proxy):
    topic, cid = fresh("ex-rc"), fresh("ex-rc")
    cluster.admin.create_topic(topic, partitions=1)
    b = cluster.bootstrap_servers()
    example("transactional_producer.py", "--bootstrap-servers", b, "--topic", topic, "--transactional-id", cid,
            "--count", "2", "--prefix", "kept")  # fmt: skip
    example("transactional_producer.py", "--bootstrap-servers", b, "--topic", topic, "--transactional-id", cid,
            "--count", "2", "--prefix", "aborted", "--abort")  # fmt: skip
    with proxy.drop_response(api="Fetch", client_id=cid) as fault:
        committed = example(
            "read_committed_consumer.py", "--bootstrap-servers", cluster.bootstrap_servers(proxied=True),
            "--topic", topic, "-X", f"client.id={cid}", "-X", f"socket.timeout.ms={RESEND_MS}",
        ).stdout  # fmt: skip
        assert fault.fired == 1
    uncommitted = example("read_committed_consumer.py", "--bootstrap-servers", b, "--topic", topic,
                          "--isolation-level", "read_uncommitted").stdout  # fmt: skip
    # offsets 0-1 kept, 2 its commit marker, 3-4 aborted, 5 the abort marker
    assert f"{topic}[0]@0 'kept 0'" in committed and "'aborted" not in committed, committed
    assert "2 records read" in committed and "2 records given of offsets 0..5" in committed, committed
    assert "4 records read" in uncommitted and "'aborted 1'" in uncommitted, uncommitted


def _open_txn_with_acked_output(path: Path) -> bool:
    """The history's last transaction has an acknowledged output and no outcome yet (after a committed one)."""
    events = hist.read_history(path).events if path.exists() else []
    ends = [i for i, e in enumerate(events) if isinstance(e, hist.Committed | hist.Aborted)]
    if not ends:
        return False
    return any(isinstance(e, hist.Sent) and e.acked for e in events[ends[-1] + 1 :])


def _kill_when(proc: subprocess.Popen[str], cut_here: Callable[[], bool], what: str, timeout: float) -> None:
    """Freeze the loop (SIGSTOP) and ask ``cut_here()`` what it had done: True -> SIGKILL; otherwise let it run on
    (SIGCONT) and ask again. What the evidence says is what the loop had done when killed."""

    def frozen_and_cut() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"{what} ended (exit {proc.returncode}) before a transaction could be cut")
        os.kill(proc.pid, signal.SIGSTOP)
        if cut_here():
            os.kill(proc.pid, signal.SIGKILL)
            return True
        os.kill(proc.pid, signal.SIGCONT)
        return False

    wait_until(frozen_and_cut, timeout=timeout, interval=0.05, what=f"{what} in a transaction", progress=False)
    proc.wait(10)


def _kill_mid_transaction(proc: subprocess.Popen[str], history: Path) -> None:
    """SIGKILL eos_loop.py when its history shows a transaction open with an acknowledged output."""
    _kill_when(proc, lambda: _open_txn_with_acked_output(history), "eos_loop.py", timeout=60)


def test_eos_loop_killed_mid_transaction_and_restarted_writes_each_output_once(cluster, tmp_path):
    src, out, name = fresh("ex-loop-in"), fresh("ex-loop-out"), fresh("ex-loop")
    cluster.admin.create_topic(src, partitions=2)
    cluster.admin.create_topic(out, partitions=2)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers()})
    produce_all(p, src, [{"value": f"order {i}".encode(), "key": str(i).encode()} for i in range(60)])
    loop = [sys.executable, str(EXAMPLES / "eos_loop.py"), "--bootstrap-servers", cluster.bootstrap_servers(),
            "--input", src, "--output", out, "--group", name, "--transactional-id", name]  # fmt: skip
    h1, h2 = tmp_path / "first.jsonl", tmp_path / "restarted.jsonl"
    # 30 ms a record: a batch of 10 spends ~0.3 s with its transaction open, so the freeze finds one soon
    first = subprocess.Popen([*loop, "--history", str(h1), "--work-ms", "30"], text=True, stdout=subprocess.PIPE)
    try:
        _kill_mid_transaction(first, h1)
    finally:
        first.kill()
        first.wait(10)
    restarted = example("eos_loop.py", *loop[2:], "--history", str(h2), "--idle", "3").stdout
    assert "transactions committed" in restarted, restarted

    inputs = hist.read_final(cluster, src, "read_committed")
    # the transform is upper-case, and the inputs differ: an output's value names its input
    origin: dict[str | None, hist.Position] = {r.value.upper(): inputs.at(r) for r in inputs.records if r.value}
    outputs = hist.read_both(cluster, out)
    verdict = hist.check([h1, h2], outputs, inputs=inputs, origin=origin.get)
    assert len(inputs.records) == 60
    assert verdict.found == {}, verdict.counts
    assert verdict.stats["read_committed records"] == 60
    # the killed transaction's acknowledged outputs are on disk, aborted by the restart's init_transactions
    assert verdict.stats["read_uncommitted records"] > 60, verdict.stats
    assert verdict.stats["processes"] == 2


JAVA_LOOP = EXAMPLES / "java" / "EosLoop.java"


def _java_loop(cluster, *args: str) -> list[str]:
    from eoslab import _jars, _java

    classpath = _jars.kafka_classpath()
    return [
        _java.java_executable(),
        "-cp",
        classpath,
        str(JAVA_LOOP),
        "--bootstrap-servers",
        cluster.bootstrap_servers(),
        *args,
    ]


def _kill_with_a_transaction_open(proc: subprocess.Popen[str], lines: list[str]) -> None:
    """SIGKILL EosLoop.java when two transactions have committed (the restart must start from their offsets) and its
    last line says the next one's records are sent, not yet committed. 90 s: Java compiles the file first."""

    def open_after_two_commits() -> bool:
        done = sum("records committed with offsets" in line for line in lines)
        return done >= 2 and lines[-1].endswith("records sent")

    _kill_when(proc, open_after_two_commits, "EosLoop.java", timeout=90)


def test_java_eos_loop_killed_with_a_transaction_open_and_restarted_writes_each_output_once(cluster):
    import threading

    src, out, name = fresh("ex-jloop-in"), fresh("ex-jloop-out"), fresh("ex-jloop")
    cluster.admin.create_topic(src, partitions=2)
    cluster.admin.create_topic(out, partitions=2)
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers()})
    produce_all(p, src, [{"value": f"order {i}".encode(), "key": str(i).encode()} for i in range(60)])
    loop = ["--input", src, "--output", out, "--group", name, "--transactional-id", name]
    # 30 ms a record: a batch of 10 keeps its transaction open ~0.3 s, so the freeze finds one soon
    first = subprocess.Popen(_java_loop(cluster, *loop, "--work-ms", "30"), text=True, stdout=subprocess.PIPE)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(line.rstrip() for line in first.stdout or ()), daemon=True)
    reader.start()
    try:
        _kill_with_a_transaction_open(first, lines)
    finally:
        first.kill()
        first.wait(10)
    reader.join(10)
    cut = lines[-1]
    restarted = subprocess.run(_java_loop(cluster, *loop, "--idle", "3"), capture_output=True, text=True, timeout=120)
    assert restarted.returncode == 0, f"{restarted.stdout}\n{restarted.stderr}"
    assert "transactions committed" in restarted.stdout, restarted.stdout
    assert values(cluster, out, "read_committed") == Counter(f"ORDER {i}" for i in range(60)), (cut, restarted.stdout)
