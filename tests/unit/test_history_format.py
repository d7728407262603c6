"""History files and final reads on disk: every event survives the round trip, a process killed with
SIGKILL leaves a readable file, a torn last line is dropped and said, a broken middle line is refused;
the verdict renders for a terminal and a notebook."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from _histories import clean_run

from eoslab.history import (
    Aborted,
    Assigned,
    Committed,
    Event,
    FinalRead,
    HistoryFormatError,
    HistoryWriter,
    Polled,
    Position,
    ReadRecord,
    Sent,
    check,
    from_json,
    read_history,
    text,
    to_json,
)

EVENTS: list[Event] = [
    Assigned("p", 1.0, (("in", 0), ("in", 1))),
    Polled("p", 1.5, Position("in", 0, 7), "v7", key="k"),
    Sent("p", 2.0, "out", 1, 12, "w", key=None, source=Position("in", 0, 7), txn=3, transactional_id="t",
         producer_id=4000, producer_epoch=2),
    Sent("p", 2.1, "out", 0, None, "x", txn=3, error="_MSG_TIMED_OUT"),
    Committed("p", 3.0, 3, (Position("in", 0, 8),), "t"),
    Committed("p", 3.5, None, (Position("in", 1, 2),)),
    Aborted("p", 4.0, 4, "INVALID_TXN_STATE", "t"),
]  # fmt: skip


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.kind)
def test_every_event_survives_its_json_line(event):
    line = to_json(event)
    assert "\n" not in line
    assert from_json(line) == event


def test_values_that_are_not_utf8_survive_the_round_trip():
    raw = b"\xff\xfeok"
    e = Polled("p", 1.0, Position("in", 0, 0), text(raw))
    back = from_json(to_json(e))
    assert isinstance(back, Polled) and back.value is not None
    assert back.value.encode("utf-8", "surrogateescape") == raw


def test_a_sent_event_is_acknowledged_only_with_an_offset_and_no_error():
    ok, failed = EVENTS[2], EVENTS[3]
    assert isinstance(ok, Sent) and isinstance(failed, Sent)
    assert ok.acked and ok.at == Position("out", 1, 12)
    assert not failed.acked and failed.at is None


def test_the_writer_appends_and_the_reader_reads_back(tmp_path):
    path = tmp_path / "h" / "p.jsonl"
    with HistoryWriter(path, process="p") as w:
        for e in EVENTS[:3]:
            w.write(e)
    with HistoryWriter(path, process="p", durable=True) as w:  # a restart appends to the same file
        for e in EVENTS[3:]:
            w.write(e)
    h = read_history(path)
    assert h.events == EVENTS and h.torn_tail is None and h.processes == ("p",)
    with pytest.raises(HistoryFormatError, match="closed"):
        w.write(EVENTS[0])


def test_a_torn_last_line_is_dropped_and_kept_aside(tmp_path):
    path = tmp_path / "p.jsonl"
    full = "".join(to_json(e) + "\n" for e in EVENTS)
    path.write_text(full + to_json(EVENTS[0])[:17])
    h = read_history(path)
    assert h.events == EVENTS
    assert h.torn_tail == to_json(EVENTS[0])[:17]


@pytest.mark.parametrize(
    "line,why",
    [
        ('{"kind": "polled"', "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"kind": "launched", "process": "p", "time": 1}', "its kind is none of"),
        ('{"kind": "polled", "process": "p", "time": 1}', "wrong fields for kind 'polled': KeyError"),
        (
            '{"kind": "aborted", "process": "p", "time": 1, "txn": 1, "colour": "red"}',
            "wrong fields for kind 'aborted': TypeError",
        ),
    ],
)
def test_a_line_that_is_no_event_is_a_history_format_error(line, why):
    """A library function refuses with the kit's error, never a bare ValueError/KeyError/TypeError."""
    with pytest.raises(HistoryFormatError, match=f"^Not a history event \\({why}.*HistoryWriter wrote"):
        from_json(line)


def test_a_whole_last_event_without_its_newline_is_kept(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(to_json(EVENTS[0]) + "\n" + to_json(EVENTS[1]))
    h = read_history(path)
    assert h.events == EVENTS[:2] and h.torn_tail is None


def test_a_broken_line_before_the_last_is_refused_with_its_number(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(to_json(EVENTS[0]) + "\n" + '{"kind": "polled"\n' + to_json(EVENTS[1]) + "\n")
    with pytest.raises(HistoryFormatError, match="line 2"):
        read_history(path)
    path.write_text('{"kind": "launched", "process": "p", "time": 1}\n\n')
    with pytest.raises(HistoryFormatError, match="line 1"):
        read_history(path)
    with pytest.raises(HistoryFormatError, match="No history"):
        read_history(tmp_path / "absent.jsonl")


_WRITER = textwrap.dedent(
    """
    import sys
    from eoslab.history import HistoryWriter, Polled, Position
    with HistoryWriter(sys.argv[1], process="victim") as w:
        n = 0
        while True:
            w.write(Polled("victim", w.now(), Position("in", 0, n), "x" * 200))
            n += 1
    """
)


def test_a_writer_killed_with_sigkill_leaves_a_history_that_reads(tmp_path):
    path = tmp_path / "victim.jsonl"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)])
    try:
        deadline = time.monotonic() + 60  # a Python start and an import: seconds, even on a loaded machine
        while (not path.exists() or path.stat().st_size < 200_000) and time.monotonic() < deadline:
            assert proc.poll() is None, "the writer died on its own"
            time.sleep(0.05)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    h = read_history(path)
    assert len(h.events) > 500
    # Every line that made it is whole and in order: the offsets run 0, 1, 2 ... without a hole.
    assert [e.at.offset for e in h.events if isinstance(e, Polled)] == list(range(len(h.events)))


def test_a_final_read_is_saved_and_loaded(tmp_path):
    read = FinalRead("out", "read_committed", (ReadRecord(0, 0, "a"), ReadRecord(1, 4, None, key="k")), {0: 2, 1: 6})
    assert FinalRead.load(read.save(tmp_path / "rc.json")) == read
    assert read.covers(1, 5) and not read.covers(1, 6) and not read.covers(2, 0)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(HistoryFormatError, match="not a final read"):
        FinalRead.load(tmp_path / "bad.json")
    with pytest.raises(HistoryFormatError, match="read_committed or read_uncommitted"):
        FinalRead("out", "read_latest", (), {})


def test_check_reads_history_files_from_their_paths(tmp_path):
    r = clean_run()
    with HistoryWriter(tmp_path / "eos-1.jsonl", process="eos-1") as w:
        for e in r.events:
            w.write(e)
    assert check([tmp_path / "eos-1.jsonl"], r.reads()).found == {}


def test_the_verdict_renders_counts_examples_and_jepsen_names():
    r = clean_run()
    rc, ru = r.reads()
    leaky = FinalRead(rc.topic, "read_committed", ru.records, ru.ends)
    v = check([r.events], (leaky, ru))
    out = str(v)
    assert out.startswith("ANOMALIES (")
    assert "aborted read (G1a)" in out and ":G1a" in out and "which aborted (abortable error)" in out
    html = v._repr_html_()
    assert "<table>" in html and "aborted read (G1a)" in html and "&#x27;a2/t2&#x27;" in html
    assert {row["anomaly"]: row["count"] for row in v.rows()} == v.counts
    assert not v.valid() and v.valid(allowed=("aborted_read", "duplicate"))
    with pytest.raises(HistoryFormatError, match="not an anomaly"):
        v.count("G2")
    assert str(check([r.events], r.reads())).startswith("VALID (")


class _Msg:
    """What the writer reads off a confluent-kafka Message (a Message cannot be built by hand)."""

    def __init__(self, topic, partition, offset, value, key=None):
        self._t, self._p, self._o, self._v, self._k = topic, partition, offset, value, key

    def topic(self):
        return self._t

    def partition(self):
        return self._p

    def offset(self):
        return self._o

    def value(self):
        return self._v

    def key(self):
        return self._k


def test_the_writer_records_what_confluent_kafka_hands_a_processor(tmp_path):
    from confluent_kafka import KafkaError, TopicPartition

    path = tmp_path / "p.jsonl"
    src = Position("in", 0, 5)
    with HistoryWriter(path, process="eos-9") as h:
        h.assigned(
            [TopicPartition("in", 0), TopicPartition("in", 1)],
            [TopicPartition("in", 0, 5), TopicPartition("in", 1, -1001)],
        )
        h.polled(_Msg("in", 0, 5, b"v", b"k"))
        h.delivered(
            None, _Msg("out", 1, 9, b"w"), source=src, txn=1, transactional_id="t", producer_id=7, producer_epoch=0
        )
        h.delivered(KafkaError(KafkaError._MSG_TIMED_OUT), _Msg("out", 0, -1001, b"x"), source=src, txn=1)
        h.committed(1, [TopicPartition("in", 0, 6)], transactional_id="t")
        h.aborted(2, "INVALID_TXN_STATE", transactional_id="t")
    got = read_history(path).events
    assert [type(e) for e in got] == [Assigned, Polled, Sent, Sent, Committed, Aborted]
    a, p, ok, failed, c, ab = got
    assert isinstance(a, Assigned) and isinstance(p, Polled) and isinstance(c, Committed) and isinstance(ab, Aborted)
    assert isinstance(ok, Sent) and isinstance(failed, Sent)
    assert a.partitions == (("in", 0), ("in", 1)) and a.offsets == (Position("in", 0, 5),)  # -1001: none committed
    assert (p.at, p.value, p.key) == (Position("in", 0, 5), "v", "k")
    assert ok.acked and ok.at == Position("out", 1, 9) and ok.source == src and ok.producer_id == 7
    assert not failed.acked and failed.offset is None and failed.error == "_MSG_TIMED_OUT"
    assert c.offsets == (Position("in", 0, 6),) and c.transactional_id == "t"
    assert (ab.txn, ab.reason) == (2, "INVALID_TXN_STATE")
    assert {e.process for e in got} == {"eos-9"}
