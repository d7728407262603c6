"""The trace timeline figure, from a trace RECORDED on the real cluster (tests/data/faults/)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from eoslab.faults import Trace

DATA = Path(__file__).resolve().parents[1] / "data" / "faults"


def test_one_bar_per_eos_request_and_a_cross_where_the_answer_was_lost():
    trace = Trace(json.loads((DATA / "lost_ack_trace.json").read_text()))
    eos = [r for r in trace if r["api"] in ("InitProducerId", "Produce")]
    ax = trace.plot()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(eos)
    assert sum(t.startswith("Produce ") for t in labels) == 2
    crosses = [ln for ln in ax.get_lines() if ln.get_marker() == "x"]
    assert len(crosses) == 1  # the dropped acknowledgement
    lost = next(r for r in eos if r["fate"].startswith("response dropped"))
    assert crosses[0].get_xdata()[0] == lost["response_time"] - min(r["time"] for r in eos)


def test_an_empty_trace_says_so():
    ax = Trace([]).plot()
    assert [t.get_text() for t in ax.texts] == ["no requests in this trace"]
