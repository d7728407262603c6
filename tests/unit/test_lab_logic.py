"""The pure logic behind labs 01-02 and their lessons, on recorded real outputs (no cluster)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from eoslab import inspect as ins
from eoslab import protocol
from eoslab.demos import _pid_client, pid_ranges, producer_state
from eoslab.grading import _lab01_cases as cases

DATA = Path(__file__).resolve().parents[1] / "data" / "demos"


# -- lab 01 task 3: who leads next ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "isr", "killed", "leader"),
    [
        ([1, 3, 2], [1, 2, 3], 1, 3),  # assigned order, not id order
        ([2, 3, 1], [1, 3, 2], 2, 3),
        ([2, 3, 1], [1, 2], 2, 1),  # 3 is out of the ISR
        ([4, 5, 1], [5, 4], 5, 4),  # the dead leader was not the preferred one
        ([1, 2, 3], [1], 1, None),  # nobody eligible: no leader (unclean election is off)
    ],
)
def test_elect_takes_the_first_assigned_replica_in_the_isr(replicas, isr, killed, leader):
    assert cases.elect(replicas, isr, killed) == leader


@pytest.mark.parametrize("seed", range(20))
def test_every_decoy_rule_loses_on_the_drawn_cases(seed):
    drawn = cases.leader_cases(random.Random(seed))
    assert len(drawn) == 6
    for name, rule in cases.DECOYS.items():
        assert any(rule(c) != c.expected for c in drawn), name
    for c in drawn:
        assert c.killed in c.isr and c.expected == cases.elect(c.replicas, c.isr, c.killed)


# -- lab 01 task 2: what a wrong duplicate group mixed up ------------------------------------------


def _batch(offset, pid, epoch=-1, seq=-1, value="v"):
    return SimpleNamespace(
        base_offset=offset,
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        last_sequence=seq,
        records=[SimpleNamespace(key=None, value=value)],
    )


LOG = {
    b.base_offset: b
    for b in [
        _batch(0, -1, value="x"),
        _batch(1, -1, value="x"),  # the retry of offset 0: the one true duplicate
        _batch(2, -1, value="y"),
        _batch(3, 7, 0, 0, "a"),
        _batch(4, 7, 1, 0, "t"),  # after an epoch bump
        _batch(5, 8, 0, 0, "a"),  # a restarted application resends "a"
        _batch(6, 7, 0, 1, "t"),
    ]
}


@pytest.mark.parametrize(
    ("group", "says"),
    [
        ({0, 1}, ""),
        ({0, 2}, "records differ"),
        ({0, 3}, "mixes batches without a producer id"),
        ({3, 5}, "a NEW id"),
        ({3, 4}, "epoch bump"),
        ({3, 6}, "different sequence numbers"),
        ({0, 99}, "not batches of this log"),
    ],
)
def test_a_wrong_group_is_explained(group, says):
    why = cases.what_it_mixes(frozenset(group), LOG)
    assert (says in why) if says else why == ""


# -- lab 02 task 3: which block the next id comes from --------------------------------------------


@pytest.fixture(scope="module")
def grants():
    rows = json.loads((DATA / "pid_grants.json").read_text())
    return [ins.ProducerIdBlock(file="", **r) for r in rows]


@pytest.mark.parametrize(
    ("last", "answered"),
    [(24910, 24911), (24999, 27000), (27000, 27001), (27907, 27908), (30999, 33000), (33999, 36000)],
)
def test_next_block_holds_what_broker_2_answered(grants, last, answered):
    """Seen on the cluster: past 90 % the prefetched block is recorded yet not in use; at a block's end the
    next id jumps over other brokers' blocks."""
    block = pid_ranges.next_block(grants, 2, last)
    assert block is not None and answered in block
    if last % 1000 < 999:
        assert last in block  # even though broker 2 already held a newer grant then


def test_next_block_counts_a_snapshot_repeat_once(grants):
    repeat = ins.ProducerIdBlock(2, 1, 37000, 0, 0, "snapshot", "")
    assert pid_ranges.next_block([*grants, repeat], 2, 36500) == pid_ranges.next_block(grants, 2, 36500)


def test_next_block_is_none_before_the_next_grant_and_an_unknown_id_is_a_sentence(grants):
    assert pid_ranges.next_block(grants, 1, 37999) is None  # the broker asks now: COORDINATOR_LOAD_IN_PROGRESS
    with pytest.raises(Exception, match="No block granted to broker 2 holds producer id 500"):
        pid_ranges.next_block(grants, 2, 500)


def _blocks(broker: int, *nexts: int) -> list[ins.ProducerIdBlock]:
    return [ins.ProducerIdBlock(broker, 1, n, i, 0, "log", "") for i, n in enumerate(nexts)]


def test_the_grants_300_ids_caused_are_there_once_each_ids_block_and_any_prefetched_one_is():
    """Notebook 02's 300 producers: it waits on these grants instead of a second of sleep."""
    ids = list(range(1700, 2000))  # the last id at 99.9 % of block [1000, 2000): the broker prefetched
    assert not pid_ranges.granted(_blocks(1, 2000), 1, ids)  # the prefetched block is not in the log yet
    assert pid_ranges.granted(_blocks(1, 2000, 5000), 1, ids)  # [4000, 5000): other brokers took the blocks between
    assert not pid_ranges.granted(_blocks(2, 2000, 5000), 1, ids)  # broker 2's grants are not broker 1's
    below = list(range(1500, 1800))  # up to 80 %: no prefetch, the block holding the ids is all it takes
    assert pid_ranges.granted(_blocks(1, 2000), 1, below)
    across = list(range(1850, 2150))  # across two blocks: both, and no prefetch at 14.9 % of the second
    assert not pid_ranges.granted(_blocks(1, 2000), 1, across) and pid_ranges.granted(_blocks(1, 2000, 3000), 1, across)


# -- lesson 02's opening: a second writer under one producer id ---------------------------------------


def test_the_second_writer_sends_one_idempotent_batch_under_the_id_it_is_given(schemas):
    body = _pid_client.produce_body("one-id", 0, "B1", producer_id=1001, producer_epoch=0, sequence=1)
    frame = protocol.encode_request("Produce", _pid_client.PRODUCE_VERSION, 7, "b", body, schemas=schemas)
    sent = protocol.decode_request(frame[4:], schemas=schemas).body
    assert sent["Acks"] == -1 and sent["TransactionalId"] is None
    records = sent["TopicData"][0]["PartitionData"][0]["Records"]
    (batch,) = protocol.parse_record_batches(records)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.record_count) == (1001, 0, 1, 1)
    assert not batch.is_transactional and b"B1" in records


@pytest.mark.parametrize(
    ("answer", "error", "offset"),
    [
        ({"Index": 0, "ErrorCode": 0, "BaseOffset": 0}, None, 0),  # B0 after A0: taken for A0's retry
        ({"Index": 0, "ErrorCode": 45, "BaseOffset": -1}, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1),  # sequence 7 after 2
    ],
)
def test_the_second_writer_is_told_what_the_leader_answered(answer, error, offset):
    """The leader's answers on the cluster (Kafka 4.4): a duplicate is NONE with the first batch's offset."""
    response = {"Responses": [{"Name": "one-id", "PartitionResponses": [answer]}], "ThrottleTimeMs": 0}
    got = _pid_client.answered(response, "B0", producer_id=1001, producer_epoch=0, sequence=0)
    assert (got.error, got.offset, got.value, got.producer_id) == (error, offset, "B0", 1001)


# -- lesson 01 step 4: the restarted broker's producer-state recovery ------------------------------


def test_recovery_after_a_crash_then_after_a_clean_stop():
    text = (DATA / "broker1_restarts.log").read_text()
    clean = producer_state.parse_recovery(text, "snap-b5edd5", 0, broker=1)
    assert [(e.event, e.offset) for e in clean] == [
        ("snapshot deleted", 3),
        ("state up to offset", 5),
        ("rebuild from offset", 5),
        ("snapshot loaded", 5),  # written at the clean shutdown, at the log end: nothing left to read
        ("recovered", 5),
    ]
    crash_part = text[: text.rindex("Starting broker")]
    crash = producer_state.parse_recovery(crash_part, "snap-b5edd5", 0, broker=1)
    assert [(e.event, e.offset) for e in crash] == [
        ("state up to offset", 0),  # the unclean start: no snapshot, the log read from offset 0
        ("rebuild from offset", 0),
        ("recovered", 0),
        ("snapshot written", 3),
        ("state up to offset", 3),
        ("rebuild from offset", 3),
        ("snapshot loaded", 3),
        ("recovered", 3),
    ]
    assert crash[3].detail == "producers=1" and crash[-1].detail == "snapshot_ms=3, log_ms=0"
    assert crash[0].time == "04:36:48,556"


def test_recovery_of_another_partition_or_broker_is_empty():
    text = (DATA / "broker1_restarts.log").read_text()
    assert producer_state.parse_recovery(text, "snap-b5edd5", 1) == []
    assert producer_state.parse_recovery(text, "snap-b5edd", 0) == []
    assert producer_state.parse_recovery(text, "snap-b5edd5", 0, broker=2)  # no start of broker 2: whole text


def test_recovery_explained_in_sentences():
    text = (DATA / "broker1_restarts.log").read_text()
    crash = producer_state.parse_recovery(text[: text.rindex("Starting broker")], "snap-b5edd5", 0, broker=1)
    assert producer_state.explain(crash) == [
        "State up to offset 0: no snapshot (an empty state), nothing left to read.",
        "Read the batches from 0 up to 3 and wrote a snapshot at 3.",
        "State up to offset 3: the snapshot at 3, nothing left to read.",
    ]
    clean = producer_state.parse_recovery(text, "snap-b5edd5", 0, broker=1)
    assert producer_state.explain(clean) == [
        "State up to offset 5: the snapshot at 5, nothing left to read.",
        "Deleted the snapshot(s) at 3.",
    ]
    older = [
        producer_state.RecoveryEvent("", "state up to offset", 9, ""),
        producer_state.RecoveryEvent("", "rebuild from offset", 4, ""),
        producer_state.RecoveryEvent("", "snapshot loaded", 4, ""),
        producer_state.RecoveryEvent("", "recovered", 4, ""),
    ]
    assert producer_state.explain(older) == ["State up to offset 9: the snapshot at 4, then the batches from 4 to 9."]


def _prefetch(refusals, headroom_ms, grant_ms):
    block = ins.ProducerIdBlock(2, 1, 73000, 0, 0, "log", "")
    nxt = ins.ProducerIdBlock(2, 1, 76000, 0, 0, "log", "")
    return pid_ranges.Prefetch(2, block, nxt, 909, 91, refusals, headroom_ms, grant_ms)


def test_prefetch_explains_a_refusal_from_what_was_measured():
    # Seen on the shared 2-core machine: the burst used up the last 100 ids before the grant arrived.
    assert _prefetch(1, 95.0, 140.0).explain().startswith("1 refusal(s) at the boundary: the last 100 ids")
    assert _prefetch(0, 95.0, 12.0).explain().startswith("No refusal at the boundary")
    assert "before the burst" in _prefetch(0, None, None).explain()


def test_the_duplicate_of_module_01_is_said_only_when_the_log_shows_it():
    """Module 01 opens on this sentence: it must hold on a run where the duplicate did not happen."""
    import pandas as pd

    from eoslab.demos.idempotent import Delivery, duplicate_sentence

    frame = pd.DataFrame({"base_offset": [3, 7, 8], "value": ["other", "plain r1", "plain r1"]})
    told = Delivery("demo", 0, 8, None)
    said = duplicate_sentence(frame, "plain r1", told)
    assert said.startswith(
        "This run showed it: 2 copies of one record, at offsets [7, 8]; the client was told offset 8"
    )
    assert "(the last copy's)" in said
    assert "(the last copy's)" not in duplicate_sentence(frame, "plain r1", Delivery("demo", 0, 7, None))
    once = duplicate_sentence(frame, "other", Delivery("demo", 0, 3, None))
    assert once.startswith("This run did not show it: 1 copy of the record (offsets [3])"), once
    failed = duplicate_sentence(frame, "missing", Delivery("demo", 0, -1, "_MSG_TIMED_OUT"))
    assert failed.startswith("This run did not show it: 0 copies") and "_MSG_TIMED_OUT" in failed
