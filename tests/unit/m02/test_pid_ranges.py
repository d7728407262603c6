"""Module 02's pure logic (producer-id ranges), on recorded real outputs (no cluster): which block the next id
comes from, the grants a burst of producers caused, the second writer under one id, the prefetch's explanation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eoslab import inspect as ins
from eoslab import protocol
from eoslab.m02_pid_ranges import _pid_client
from eoslab.m02_pid_ranges import lesson as pids

DATA = Path(__file__).resolve().parents[2] / "data" / "demos"


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
    block = pids.next_block(grants, 2, last)
    assert block is not None and answered in block
    if last % 1000 < 999:
        assert last in block  # even though broker 2 already held a newer grant then


def test_next_block_counts_a_snapshot_repeat_once(grants):
    repeat = ins.ProducerIdBlock(2, 1, 37000, 0, 0, "snapshot", "")
    assert pids.next_block([*grants, repeat], 2, 36500) == pids.next_block(grants, 2, 36500)


def test_next_block_is_none_before_the_next_grant_and_an_unknown_id_is_a_sentence(grants):
    assert pids.next_block(grants, 1, 37999) is None  # the broker asks now: COORDINATOR_LOAD_IN_PROGRESS
    with pytest.raises(Exception, match="No block granted to broker 2 holds producer id 500"):
        pids.next_block(grants, 2, 500)


def _blocks(broker: int, *nexts: int) -> list[ins.ProducerIdBlock]:
    return [ins.ProducerIdBlock(broker, 1, n, i, 0, "log", "") for i, n in enumerate(nexts)]


def test_the_grants_300_ids_caused_are_there_once_each_ids_block_and_any_prefetched_one_is():
    """Notebook 02's 300 producers: it waits on these grants instead of a second of sleep."""
    ids = list(range(1700, 2000))  # the last id at 99.9 % of block [1000, 2000): the broker prefetched
    assert not pids.granted(_blocks(1, 2000), 1, ids)  # the prefetched block is not in the log yet
    assert pids.granted(_blocks(1, 2000, 5000), 1, ids)  # [4000, 5000): other brokers took the blocks between
    assert not pids.granted(_blocks(2, 2000, 5000), 1, ids)  # broker 2's grants are not broker 1's
    below = list(range(1500, 1800))  # up to 80 %: no prefetch, the block holding the ids is all it takes
    assert pids.granted(_blocks(1, 2000), 1, below)
    across = list(range(1850, 2150))  # across two blocks: both, and no prefetch at 14.9 % of the second
    assert not pids.granted(_blocks(1, 2000), 1, across) and pids.granted(_blocks(1, 2000, 3000), 1, across)


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


# -- the prefetch at 90 %: a refusal explained from what was measured ------------------------------------


def _prefetch(refusals, headroom_ms, grant_ms):
    block = ins.ProducerIdBlock(2, 1, 73000, 0, 0, "log", "")
    nxt = ins.ProducerIdBlock(2, 1, 76000, 0, 0, "log", "")
    return pids.Prefetch(2, block, nxt, 909, 91, refusals, headroom_ms, grant_ms)


def test_prefetch_explains_a_refusal_from_what_was_measured():
    # Seen on the shared 2-core machine: the burst used up the last 100 ids before the grant arrived.
    assert _prefetch(1, 95.0, 140.0).explain().startswith("1 refusal(s) at the boundary: the last 100 ids")
    assert _prefetch(0, 95.0, 12.0).explain().startswith("No refusal at the boundary")
    assert "before the burst" in _prefetch(0, None, None).explain()
