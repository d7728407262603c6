"""Two transaction protocols on one cluster, through the fault proxy: what each client really sends.

The proxy forwards ApiVersions byte for byte, so the Java 4.4 client reads the finalized
transaction.version=2 from its tagged fields and speaks KIP-890 part 2 (TV2) even through
the proxy; librdkafka 2.x stays on the original protocol. Versions asserted are what the
pinned releases do (Kafka 4.4.0, confluent-kafka 2.16.1 / librdkafka 2.16.0); what 4.1.2 did
differently is said where it differs (docs/versions.md).
"""

from __future__ import annotations

import pytest

from eoslab import inspect as ins
from eoslab.m03_transactions import lesson as txn

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def two(cluster):
    lesson = txn.TransactionLesson(cluster, inputs=3)
    return txn.two_protocols(lesson)


def _requests(step, api):
    return [r for r in step.eos_trace() if r["api"] == api]


def test_the_cluster_finalizes_transaction_version_2_and_both_tools_say_so(cluster):
    via_api = {f.name: f.finalized for f in ins.finalized_features(cluster)}
    via_tool = {f.name: f.finalized for f in ins.describe_features(cluster)}
    assert via_api["transaction.version"] == via_tool["transaction.version"] == 2
    assert {n for n, v in via_tool.items() if v} == set(via_api)  # ApiVersions leaves out level-0 features
    assert ins.transaction_version(cluster) == 2


def test_both_clients_were_told_tv2_through_the_proxy(two):
    told = two.finalized_features()
    assert told["java"]["transaction.version"] == 2
    assert told["librdkafka"]["transaction.version"] == 2  # it is told too, and ignores it


def test_java_speaks_tv2_through_the_proxy(two):
    java = two.steps["java"]
    assert _requests(java, "AddPartitionsToTxn") == [] and _requests(java, "AddOffsetsToTxn") == []
    assert {r["version"] for r in _requests(java, "Produce")} == {13}
    # v6 since 4.4 (KIP-1319: topic ids; 4.1's client sent v5 with names): the trace names the topic from the
    # ids the relayed Metadata responses carried.
    commits = _requests(java, "TxnOffsetCommit")
    assert {r["version"] for r in commits} == {6}
    assert {i["topic"] for r in commits for i in r["request"]["items"]} == {two.lesson.input_topic}
    ends = _requests(java, "EndTxn")
    assert [r["version"] for r in ends] == [5, 5, 5]
    # Every EndTxn is answered with the same producer id and the NEXT epoch, which the next transaction uses.
    sent = [r["request"]["producer_epoch"] for r in ends]
    answered = [r["response"]["producer_epoch"] for r in ends]
    assert answered == [e + 1 for e in sent] and sent[1:] == answered[:-1]
    assert len({r["response"]["producer_id"] for r in ends}) == 1


def test_librdkafka_stays_on_the_original_protocol(two):
    rd = two.steps["librdkafka"]
    assert {r["version"] for r in _requests(rd, "AddPartitionsToTxn")} == {0}
    assert {r["version"] for r in _requests(rd, "AddOffsetsToTxn")} == {0}
    assert max(r["version"] for r in _requests(rd, "Produce")) <= 10
    assert max(r["version"] for r in _requests(rd, "TxnOffsetCommit")) <= 3
    ends = _requests(rd, "EndTxn")
    assert [r["version"] for r in ends] == [1, 1, 1]
    assert all("producer_epoch" not in (r["response"] or {}) for r in ends)  # EndTxn v1 carries no epoch
    assert len({r["request"]["producer_epoch"] for r in ends}) == 1  # one epoch for the whole session


def test_on_disk_and_in_the_coordinator_log(two):
    states = two.states()
    java, rd = states[states.client == "java"], states[states.client == "librdkafka"]
    assert set(rd.producer_epoch) == {0} and rd.client_transaction_version.isna().all()
    ends = java[java.state.str.startswith("Prepare")]
    assert list(ends.producer_epoch) == [1, 2, 3]  # bumped at every end
    assert set(java[java.state != "Empty"].client_transaction_version) == {2}
    disk = two.disk()
    jdata = disk[(disk.client == "java") & disk.marker.isna()]
    assert set(jdata.base_sequence) == {0}  # a new epoch per transaction: sequences restart
    jmarks = disk[(disk.client == "java") & disk.marker.notna()]
    assert sorted(jmarks.producer_epoch) == [1, 1, 2, 2, 3, 3]
    rmarks = disk[(disk.client == "librdkafka") & disk.marker.notna()]
    assert set(rmarks.producer_epoch) == {0} and len(rmarks) == 6


def test_heal_ends_a_java_producer_a_lesson_left_frozen(cluster):
    import psutil

    import eoslab
    from eoslab.java_client import JavaProducer

    j = JavaProducer({"bootstrap.servers": cluster.bootstrap_servers(), "client.id": "left-behind"}).start()
    pid = j.pid
    j.freeze()  # a notebook that died mid-lesson leaves it like this
    eoslab.heal(cluster)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    j.proc = None  # it is gone: nothing left to stop
