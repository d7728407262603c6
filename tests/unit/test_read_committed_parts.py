"""Module 04's pure pieces: the record batch encoder, find-hanging's table, the Fetch summary, the views."""

from __future__ import annotations

import random
import struct
from pathlib import Path

from eoslab import inspect as ins
from eoslab.demos import read_committed as rc
from eoslab.faults._summary import summarize_response
from eoslab.protocol import crc32c, decode_response, encode_record_batch, encode_response, parse_record_batches

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"


def test_crc32c_is_castagnoli():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc32c(b"") == 0


def test_encoded_batch_parses_back_with_a_valid_crc():
    raw = encode_record_batch(
        [b"a", None, b"ccc"], producer_id=1037, producer_epoch=2, base_sequence=5, transactional=True, timestamp_ms=7
    )
    (h,) = parse_record_batches(raw)
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.record_count) == (1037, 2, 5, 3)
    assert h.is_transactional and not h.is_control and h.last_offset == 2 and h.base_timestamp == 7
    assert h.crc == crc32c(raw[21:])  # everything after the crc field
    assert struct.unpack_from(">i", raw, 8)[0] == len(raw) - 12  # batch length excludes offset and length


def test_find_hanging_table():
    (t,) = ins.parse_find_hanging((DATA / "find_hanging.txt").read_text())
    assert (t.partition, t.producer_id, t.producer_epoch, t.start_offset, t.duration_min) == (0, 1037, 0, 2, 0)
    assert t.topic.startswith("rec-hang-")
    assert ins.parse_find_hanging("Topic\tPartition\tProducerId\t\n") == []  # nothing hanging: a header only


def test_fetch_response_summary_keeps_aborted_transactions_and_batches():
    records = encode_record_batch([b"x"], producer_id=7, producer_epoch=0, base_sequence=0, transactional=True)
    body = {
        "ThrottleTimeMs": 0,
        "ErrorCode": 0,
        "SessionId": 0,
        "Responses": [
            {
                "Topic": "rc-t",
                "Partitions": [
                    {
                        "PartitionIndex": 0,
                        "ErrorCode": 0,
                        "HighWatermark": 12,
                        "LastStableOffset": 7,
                        "LogStartOffset": 0,
                        "AbortedTransactions": [{"ProducerId": 7, "FirstOffset": 3}],
                        "PreferredReadReplica": -1,
                        "Records": records,
                    }
                ],
            }
        ],
    }
    frame = encode_response("Fetch", 12, 1, body)
    resp = decode_response(frame[4:], "Fetch", 12)
    out = summarize_response(resp, {"isolation_level": "read_committed", "partitions": []}, {})
    (p,) = out["partitions"]
    assert (p["topic"], p["partition"], p["high_watermark"], p["last_stable_offset"]) == ("rc-t", 0, 12, 7)
    assert p["aborted_transactions"] == [{"producer_id": 7, "first_offset": 3}]
    assert p["batches"] == [
        {"base_offset": 0, "last_offset": 0, "producer_id": 7, "transactional": True, "control": False, "marker": None}
    ]
    assert out["error"] == "NONE"


def test_gaps_are_offsets_below_the_lso_not_returned():
    reads = rc.Reads({}, {0: "a", 1: "b", 2: "c", 5: "d"}, high_watermark=12, last_stable=7)
    assert rc.gaps(reads) == [(3, 4), (6, 6)]


def test_an_aborted_read_is_said_only_when_the_consumer_returned_an_aborted_record():
    """Module 04 opens on this sentence: it must hold on a run that did not show the anomaly."""
    log = rc.WrittenLog(None, "rc-why-x", 0, [])  # type: ignore[arg-type]  # a pure view: no cluster needed
    log.records = [
        rc.LogRecord("plain:0", "plain", 0, "plain", 0),
        rc.LogRecord("t1#1:0", "t1", 1, "aborted", 1),
        rc.LogRecord("t1#1:1", "t1", 1, "aborted", 2),
        rc.LogRecord("t2#1:0", "t2", 1, "committed", 4),
    ]
    said = rc.aborted_read_sentence(log, ["plain:0", "t1#1:0", "t1#1:1", "t2#1:0"])
    assert said == (
        "This run showed it: the consumer handed the application 4 records, 2 of them from a transaction that "
        "t1 ABORTED (t1#1:0, t1#1:1)."
    )
    clean = rc.aborted_read_sentence(log, ["plain:0", "t2#1:0"])
    assert clean.startswith("This run did not show it: none of the 2 records"), clean


def test_lso_facts_and_source_001s_off_by_one():
    f = rc.LsoFacts(12, 7, {"t3": 7, "t4": 9}, {1: 7, 2: 9, 3: None}, 5)
    assert f.expected == 7 and f.source_001 == 6
    assert rc.LsoFacts(12, 12, {}, {}, 11).expected == 12


def test_random_patterns_leave_exactly_the_open_transactions_asked():
    for seed in range(200):
        for open_txns in (0, 1, 2):
            ops = rc.random_pattern(random.Random(seed), actors=3, steps=8, open_txns=open_txns)
            open_now: set[str] = set()
            for op in ops:
                if op.actor == rc.PLAIN:
                    continue
                open_now.add(op.actor) if op.action == "send" else open_now.discard(op.actor)
            assert len(open_now) == open_txns, (seed, ops)


def test_fetch_mermaid_names_the_run_numbers():
    rows = [
        {
            "broker": 1,
            "request": {
                "isolation_level": "read_committed",
                "partitions": [{"topic": "t", "partition": 0, "fetch_offset": 0}],
            },
            "response": {
                "partitions": [
                    {
                        "topic": "t",
                        "partition": 0,
                        "high_watermark": 12,
                        "last_stable_offset": 7,
                        "aborted_transactions": [{"producer_id": 9, "first_offset": 3}],
                        "batches": [{"base_offset": 0, "last_offset": 6}],
                    }
                ]
            },
        }
    ]
    text = rc.fetch_mermaid(rows, "t", 0, [0, 1, 2, 5])
    assert "Fetch read_committed from offset 0" in text and "LSO 7" in text and "pid 9 from 3" in text
    assert "returns offsets 0, 1, 2, 5" in text and text.startswith("sequenceDiagram")


def test_delay_request_rule_holds_and_needs_a_delay():
    import pytest

    from eoslab.faults import FaultRuleError, RuleSpec
    from eoslab.faults._rules import RuleBook, facts_from

    with pytest.raises(FaultRuleError, match="delay_request rule needs delay_s"):
        RuleSpec(action="delay_request")
    book = RuleBook()
    book.add(RuleSpec(action="delay_request", delay_s=8.0, api="Produce", topic="t", partition=0, times=None))
    item = {"items": [{"topic": "t", "partition": 0, "producer_id": 1, "producer_epoch": 0, "base_sequence": 0}]}
    d = book.decide(facts_from("Produce", "c", 1, item))
    assert d and d.delay_request_s == 8.0 and d.delay_s == 0.0 and not d.drop_request
    fetch = {"isolation_level": "read_committed", "partitions": [{"topic": "t", "partition": 0, "fetch_offset": 0}]}
    anywhere = RuleBook()
    anywhere.add(RuleSpec(action="delay_request", delay_s=1.0, topic="t", partition=0, times=None))  # no api
    assert not anywhere.decide(facts_from("Fetch", "c", 1, fetch))  # a Fetch summary has no items: never matched
