"""Module 04's Kafka facts, on the real cluster: what each isolation level returns, the LSO, each client's
default, the Fetch's aborted-transaction list, the answers to late writes, a hanging transaction.

One log (written once for the module) serves the reading tests; the late writes get their own topic.
"""

from __future__ import annotations

import pytest

from eoslab import inspect as ins
from eoslab.demos import read_committed as rc

pytestmark = [pytest.mark.cluster]

PATTERN = [
    rc.Op("plain"),
    rc.Op("t1", "send", 2),
    rc.Op("t2"),
    rc.Op("t1", "commit"),
    rc.Op("plain"),
    rc.Op("t2", "abort"),
    rc.Op("t3", "send", 2),
    rc.Op("plain"),
    rc.Op("t1"),
    rc.Op("t1", "commit"),
]


@pytest.fixture(scope="module")
def log(cluster):
    written = rc.write_log(cluster, rc.new_topic(cluster, "test-rc"), 0, PATTERN)
    yield written
    written.close()


@pytest.fixture(scope="module")
def reads(log):
    return rc.read_both(log)


def test_each_level_returns_what_the_fates_allow(log, reads):
    fates = {r.offset: r.fate for r in log.records}
    lso = reads.last_stable
    assert set(reads.read_uncommitted) == set(fates)  # every data record, aborted and open ones too
    assert set(reads.read_committed) == {o for o, f in fates.items() if f in ("committed", "plain") and o < lso}
    # t1's second transaction committed and a plain record came after t3's open one: still not returned
    assert any(f in ("committed", "plain") and o > lso for o, f in fates.items())


def test_lso_is_the_first_offset_of_the_open_transaction_not_the_one_before(log, reads):
    facts = rc.lso_facts(log, reads)
    first = min(r.offset for r in log.records if r.fate == "open")
    assert facts.last_stable == first == facts.expected  # source 001's "offset before" would be first - 1
    assert facts.last_committed_read is not None and facts.last_committed_read < first
    assert first in facts.describe_producers.values()  # DescribeProducers' CurrentTransactionStartOffset
    assert reads.last_stable < reads.high_watermark


def test_librdkafka_defaults_to_read_committed_java_to_read_uncommitted(log, reads):
    assert rc.default_isolation(log) == list(reads.read_committed.values())
    assert rc.java_console_read(log, len(reads.read_uncommitted)) == list(reads.read_uncommitted.values())


def test_fetch_lists_aborted_transactions_and_the_client_drops_them(log, reads):
    aborted = [r for r in log.records if r.fate == "aborted"]
    returned, rows = rc.traced_read(log)
    assert returned == sorted(reads.read_committed)
    parts = [p for r in rows for p in (r.get("response") or {}).get("partitions") or [] if p["batches"]]
    assert parts and all((r.get("request") or {}).get("isolation_level") == "read_committed" for r in rows)
    listed = {(a["producer_id"], a["first_offset"]) for p in parts for a in p["aborted_transactions"] or []}
    pid = log.producer_id("t2")
    assert (pid, aborted[0].offset) in listed
    sent = {o for p in parts for b in p["batches"] for o in range(b["base_offset"], b["last_offset"] + 1)}
    assert aborted[0].offset in sent and aborted[0].offset not in returned  # sent by the broker, dropped by the client
    index = ins.txn_index(log.cluster, log.topic, 0)
    assert [(e.producer_id, e.first_offset) for e in index] == [(pid, aborted[0].offset)]


def test_late_writes_and_a_hanging_transaction(healed):
    cluster = healed
    topic = rc.new_topic(cluster, "test-late")
    h = rc.late_writes(cluster, topic)
    codes = [(c["case"].split(":")[0].split(" (")[0], c["error_code"]) for c in h.cases]
    assert [c for _, c in codes] == [48, 0, 45, 47, 0, 48], h.frame().to_string()
    dup = h.cases[1]
    assert dup["base_offset"] == 0  # the copy was not written again: the offset of the original batch
    before, late, aborted, again = h.offsets
    assert (
        late["high_watermark"] == before["high_watermark"] + 1
        and late["last_stable_offset"] == before["high_watermark"]
    )
    assert [(t.topic, t.start_offset) for t in h.found] == [(topic, before["high_watermark"])]
    assert aborted["last_stable_offset"] == aborted["high_watermark"]  # the abort marker ended it
    assert h.found_after == [] and again["last_stable_offset"] == again["high_watermark"]
    assert all(rc.verification(cluster, b.node_id)[0] for b in cluster.topology.brokers)


def test_verification_is_a_dynamic_broker_config(healed):
    cluster = healed
    with rc.verification_off(cluster):
        assert rc.verification(cluster, 2) == (False, "DYNAMIC_BROKER_CONFIG")
    assert rc.verification(cluster, 2) == (True, "DEFAULT_CONFIG")


def test_an_open_transaction_holds_its_partition_only(cluster):
    w = rc.watch_lso(cluster, rc.new_topic(cluster, "test-watch"), before=0.5, open_for=2.5, after=1.0, live=False)
    df = w.frame()
    a_open = df[(df["partition"] == 0) & (df["t"] > w.opened_at + 0.5) & (df["t"] < w.committed_at)]
    assert len(a_open) and (a_open["last_stable"] < a_open["high_watermark"]).all()
    assert a_open["last_stable"].nunique() == 1  # held where the transaction began
    b = df[df["partition"] == 1]
    assert (b["last_stable"] >= b["high_watermark"]).all()  # (the LSO is asked after the HW: it may be newer)
    a_end = df[(df["partition"] == 0)].iloc[-1]
    assert a_end["last_stable"] >= a_end["high_watermark"] - 2  # committed: caught up (plain writes go on)


def test_librdkafkas_held_produce_hangs_only_without_verification(healed):
    cluster = healed
    topic = rc.new_topic(cluster, "test-held")
    on = rc.held_produce(cluster, topic, verify=True)
    assert on.epochs == (0, 1)  # librdkafka bumped its epoch after the abort (KIP-360)
    assert on.hanging == [] and on.offsets is not None and on.offsets.last_stable == on.offsets.high_watermark
    off = rc.held_produce(cluster, topic, verify=False)
    assert off.offsets is not None and off.offsets.last_stable == off.offsets.high_watermark - 1  # the late batch
    assert [(t.producer_epoch, t.start_offset) for t in off.hanging] == [(0, off.offsets.last_stable)]
    assert (
        ins.partition_offsets(cluster, topic, 0).last_stable == ins.partition_offsets(cluster, topic, 0).high_watermark
    )
    assert all(rc.verification(cluster, b.node_id)[0] for b in cluster.topology.brokers)
    # the leader's answers to the late request, which the proxy delivered on its own connection
    assert [(r.get("response") or {}).get("error") for r in on.rows] == ["INVALID_PRODUCER_EPOCH"]
    assert [(r.get("response") or {}).get("error") for r in off.rows] == ["NONE"]
    assert off.rows[0]["response"]["items"][0]["base_offset"] == off.offsets.last_stable


def test_heal_turns_verification_back_on(healed):
    import eoslab

    cluster = healed
    rc.set_verification(cluster, False)  # a lesson interrupted between its change and its undo
    eoslab.heal(cluster)
    assert [rc.verification(cluster, b.node_id) for b in cluster.topology.brokers] == [(True, "DEFAULT_CONFIG")] * 3
