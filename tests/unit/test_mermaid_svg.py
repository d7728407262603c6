"""The static SVG twin of each Mermaid diagram, drawn from traces RECORDED on the real cluster."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

from eoslab._display import mermaid_bundle
from eoslab._mermaid_svg import flowchart_svg, mermaid_svg, sequence_svg
from eoslab.faults import Trace

DATA = Path(__file__).resolve().parents[1] / "data" / "faults"
SVG = "{http://www.w3.org/2000/svg}"

# The shape cluster_mermaid() writes (eoslab/cluster/_views.py), with broker 1 killed.
CLUSTER = """flowchart TB
  subgraph Q["KRaft quorum (__cluster_metadata)"]
    controller1["controller-1<br/>id 101<br/>running ★ leader"]
    controller2["controller-2<br/>id 102<br/>running"]
    controller3["controller-3<br/>id 103<br/>running"]
  end
  subgraph B["Brokers"]
    broker1["Broker 1<br/>stopped"]
    broker2["Broker 2<br/>running<br/>demo-0 leader<br/>demo-1 leader"]
    broker3["Broker 3<br/>running"]
  end
  Q -- metadata --> B
  style broker1 fill:#fdd,stroke:#c00"""


def _trace(name: str) -> Trace:
    return Trace(json.loads((DATA / name).read_text()))


def _texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


@pytest.mark.parametrize("name", ["lost_ack_trace.json", "txn_trace.json"])
def test_every_participant_and_message_of_a_recorded_trace_is_drawn(name):
    diagram = _trace(name).mermaid()
    svg = sequence_svg(diagram)
    assert svg is not None
    texts = _texts(svg)  # parses: well-formed XML
    for line in diagram.splitlines()[1:]:
        line = line.strip()
        if line.startswith("participant"):
            assert texts.count(line.split(" as ", 1)[1]) == 2  # a box at the top and at the bottom
        else:
            assert line.split(":", 1)[1].strip() in texts, line


def test_a_lost_response_ends_in_a_red_cross_and_has_no_arrow_head():
    diagram = _trace("lost_ack_trace.json").mermaid()
    lost = [ln for ln in diagram.splitlines() if "--x" in ln]
    assert len(lost) == 1
    root = ET.fromstring(sequence_svg(diagram) or "")
    arrows = [el for el in root.iter(f"{SVG}line") if el.get("marker-end")]
    messages = [ln for ln in diagram.splitlines() if any(a in ln for a in ("->>", "-->>", "-x", "--x"))]
    assert len(arrows) == len(messages) - len(lost)
    crosses = [el for el in root.iter(f"{SVG}path") if el.get("stroke") == "#c00"]
    assert len(crosses) == 1
    red = [t.text for t in root.iter(f"{SVG}text") if t.get("fill") == "#c00"]
    assert red and "response dropped" in (red[0] or "")


def test_messages_are_drawn_top_to_bottom_in_the_diagrams_order():
    diagram = _trace("txn_trace.json").mermaid()
    root = ET.fromstring(sequence_svg(diagram) or "")
    ys = [float(el.get("y1") or 0) for el in root.iter(f"{SVG}line") if el.get("marker-end")]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)


def test_notes_and_unknown_syntax():
    svg = sequence_svg(
        "sequenceDiagram\n    participant C1 as me\n    C1->>B1: hello\n    Note over C1: 3 more messages"
    )
    assert svg is not None and "3 more messages" in _texts(svg) and "B1" in _texts(svg)
    # Syntax the kit never writes: no picture rather than a wrong one.
    assert sequence_svg("sequenceDiagram\n    loop every second\n    A->>B: x\n    end") is None
    assert mermaid_svg("graph LR\n  A --> B") is None
    assert mermaid_svg("") is None


def test_the_cluster_flowchart_shows_every_node_and_marks_the_stopped_broker():
    svg = flowchart_svg(CLUSTER)
    assert svg is not None
    texts = _texts(svg)
    for t in ("KRaft quorum (__cluster_metadata)", "Brokers", "controller-1", "running ★ leader", "Broker 1"):
        assert t in texts
    assert "demo-0 leader" in texts and "metadata" in texts
    fills = [el.get("fill") for el in ET.fromstring(svg).iter(f"{SVG}rect")]
    assert fills.count("#fdd") == 1


def test_the_bundle_gives_jupyterlab_mermaid_and_every_other_viewer_the_svg():
    diagram = _trace("lost_ack_trace.json").mermaid()
    bundle = mermaid_bundle(diagram)
    assert bundle["text/vnd.mermaid"] == diagram
    assert bundle["text/plain"] == diagram
    assert bundle["image/svg+xml"].startswith("<svg")
    assert "image/svg+xml" not in mermaid_bundle("graph LR\n  A --> B")


def test_a_notebook_exported_to_html_shows_the_run_as_svg():
    """`jupyter nbconvert --to html` picks the SVG over text/vnd.mermaid: the run shows offline."""
    diagram = _trace("lost_ack_trace.json").mermaid()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("eoslab.show_mermaid(trace.mermaid())")
    cell.outputs = [nbformat.v4.new_output("display_data", data=mermaid_bundle(diagram))]
    nb.cells = [cell]
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert '<pre class="mermaid">' not in html  # no mermaid.js needed (it would come from a CDN)
    embedded = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert len(embedded) == 1
    assert "response dropped by proxy" in base64.b64decode(embedded[0]).decode()


def _recorded_states_diagram() -> str:
    """Module 03's state diagram of a RECORDED `__transaction_state` dump (librdkafka and Java TV2 ids,
    a fence, a timeout abort): what the notebook's last diagram draws."""
    from eoslab import inspect as ins
    from eoslab.m03_transactions._step import STATE_COLUMNS
    from eoslab.m03_transactions.lesson import states_diagram

    dump = (DATA.parent / "inspect" / "dump_txn_log_tv2.txt").read_text()
    return states_diagram(ins.frame(ins.parse_transaction_log(ins.parse_dump(dump)), STATE_COLUMNS))


def test_the_coordinators_state_diagram_shows_every_state_and_transition():
    diagram = _recorded_states_diagram()
    svg = mermaid_svg(diagram)
    assert svg is not None and "State diagram" in svg
    texts = _texts(svg)
    transitions = [ln.strip() for ln in diagram.splitlines()[1:]]
    states = {s for ln in transitions for s in ln.split(" : ")[0].split(" --> ")} - {"[*]"}
    assert states >= {"Empty", "Ongoing", "PrepareCommit", "CompleteCommit", "PrepareAbort", "CompleteAbort"}
    for state in states:
        assert texts.count(state) == 1, state
    for ln in transitions:  # every label is drawn, parallel transitions one line each on a shared arrow
        assert ln.split(" : ", 1)[1] in texts, ln
    pairs = {tuple(ln.split(" : ")[0].split(" --> ")) for ln in transitions}
    root = ET.fromstring(svg)
    assert len([el for el in root.iter(f"{SVG}path") if el.get("marker-end")]) == len(pairs)
    assert len([el for el in root.iter(f"{SVG}circle")]) == 1  # the start; nothing ends


def test_state_diagram_start_end_and_unknown_syntax():
    svg = mermaid_svg("stateDiagram-v2\n    [*] --> Empty\n    Empty --> Dead : tombstone\n    Dead --> [*]")
    assert svg is not None and {"Empty", "Dead", "tombstone"} <= set(_texts(svg))
    assert len(list(ET.fromstring(svg).iter(f"{SVG}circle"))) == 3  # the start dot, the end's two rings
    assert mermaid_svg("stateDiagram-v2\n    state Fork <<fork>>\n    A --> B") is None
    assert mermaid_svg("stateDiagram-v2") is None
    assert "image/svg+xml" in mermaid_bundle(_recorded_states_diagram())
