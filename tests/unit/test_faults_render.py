"""Mermaid and DataFrame rendering of traces RECORDED from the real cluster (tests/data/faults/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eoslab.faults import BLIND_SPOTS, Trace
from eoslab.faults._summary import error_name

DATA = Path(__file__).resolve().parents[1] / "data" / "faults"


@pytest.fixture
def txn() -> Trace:
    return Trace(json.loads((DATA / "txn_trace.json").read_text()))


@pytest.fixture
def lost_ack() -> Trace:
    return Trace(json.loads((DATA / "lost_ack_trace.json").read_text()))


def test_mermaid_of_a_transaction_names_participants_and_every_eos_step(txn):
    diagram = txn.mermaid()
    lines = diagram.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert lines[1].startswith("    participant C1 as rec-txn-")
    assert any(ln.strip().startswith("participant B1 as Broker 1") for ln in lines)
    for step in (
        "FindCoordinator",
        "InitProducerId",
        "AddPartitionsToTxn",
        "AddOffsetsToTxn",
        "TxnOffsetCommit",
        "EndTxn",
        "COMMIT",
        " txn",
    ):
        assert step in diagram, step
    assert "Metadata" not in diagram and "ApiVersions" not in diagram  # EOS APIs only by default
    assert "Metadata" in txn.mermaid(all_apis=True)
    for ln in lines[1:]:
        text = ln.split(":", 1)[-1]
        assert ";" not in text and "#" not in text  # Mermaid statement / entity delimiters


def test_mermaid_events_follow_time_order(txn):
    body = [ln.strip() for ln in txn.mermaid().splitlines() if "->>" in ln or "-->>" in ln]
    init_req = next(i for i, ln in enumerate(body) if ln.startswith("C1->>") and "InitProducerId" in ln)
    init_resp = next(i for i, ln in enumerate(body) if "-->>C1" in ln and "InitProducerId" in ln)
    end_resp = next(i for i, ln in enumerate(body) if "-->>C1" in ln and "EndTxn" in ln)
    assert init_req < init_resp < end_resp == len(body) - 1


def test_lost_ack_renders_a_crossed_response_then_the_deduplicated_retry(lost_ack):
    lines = [ln.strip() for ln in lost_ack.mermaid().splitlines() if ": Produce " in ln]
    assert len(lines) == 4
    assert "--x" in lines[1] and "response dropped by proxy" in lines[1]
    assert lines[0].split(":", 1)[1] == lines[2].split(":", 1)[1]  # the same pid, epoch, seq resent
    assert lines[1].split(" (")[0].split(":", 1)[1] == lines[3].split(":", 1)[1]  # same offset answered


def test_frame_has_one_line_per_batch_with_request_and_response_fields(lost_ack, txn):
    df = lost_ack.frame()
    produce = df[df.api == "Produce"]
    assert len(produce) == 2
    assert produce.base_sequence.tolist() == [0, 0] and produce.base_offset.tolist() == [0, 0]
    assert produce.producer_id.nunique() == 1 and produce.error.tolist() == ["NONE", "NONE"]
    init = df[df.api == "InitProducerId"].iloc[0]
    assert init.producer_id == produce.producer_id.iloc[0]  # InitProducerId shows the GRANTED id
    tdf = txn.frame()
    assert sorted(tdf[tdf.api == "Produce"].partition.tolist()) == [0, 1]
    assert tdf[tdf.api == "Produce"].transactional.all()
    assert list(Trace().frame().columns) == list(df.columns)  # an empty trace still has its columns


def test_max_events_notes_what_was_left_out(txn):
    lines = txn.mermaid(max_events=3).splitlines()
    assert len([ln for ln in lines if ">>" in ln]) == 3
    assert lines[-1].strip().startswith("Note over C1:") and lines[-1].endswith("more messages not shown")


def test_where_filters_rows(lost_ack):
    assert {r["api"] for r in lost_ack.where(api="Produce")} == {"Produce"}


def test_error_names_and_blind_spots():
    assert error_name(45) == "OUT_OF_ORDER_SEQUENCE_NUMBER" and error_name(47) == "INVALID_PRODUCER_EPOCH"
    assert error_name(0) == "NONE" and error_name(None) is None and error_name(9999) == "ERROR_9999"
    assert any("WriteTxnMarkers" in b for b in BLIND_SPOTS) and any("AllocateProducerIds" in b for b in BLIND_SPOTS)
