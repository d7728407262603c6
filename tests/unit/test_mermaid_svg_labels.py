"""Labels of several lines (Mermaid's ``<br/>``) and boxes sized from their text, in the static SVG twin.

A reader of notebook 03 exported to HTML saw ``Broker 3<br/>(txn coordinator)`` printed with its tag,
and the box of "Broker 2 (leader of B)" drawn over the box of "Broker 3 (txn coordinator)". The
diagram here is built the way notebook 03 builds its step diagrams: a trace RECORDED on the real
cluster, drawn by ``TransactionLesson.diagram`` with the roles ``arrange_coordinators`` gives the
brokers (A led by broker 1, B by broker 2, the group's coordinator broker 1, the transactional id's
broker 3).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from eoslab._mermaid_svg import flowchart_svg, mermaid_svg, sequence_svg, state_svg
from eoslab.m03_transactions.lesson import TransactionLesson

DATA = Path(__file__).resolve().parents[1] / "data" / "faults"
SVG = "{http://www.w3.org/2000/svg}"
ROLES = {1: "leader of A, group coordinator", 2: "leader of B", 3: "txn coordinator"}
NAMES = ["rec-txn-b90875", *(f"Broker {b}<br/>({role})" for b, role in ROLES.items())]  # left to right
COORDINATOR_APIS = {"InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn"}


def _notebook_03_diagram() -> str:
    """The recorded transaction, its coordinator requests sent to broker 3 as in notebook 03, drawn by the
    lesson's own ``diagram`` (given the roles, as a step gives the ones it recorded: no cluster needed)."""
    rows: list[dict[str, Any]] = json.loads((DATA / "txn_trace.json").read_text())
    txn_id = next(r["request"]["transactional_id"] for r in rows if r["api"] == "InitProducerId")
    for r in rows:
        if r["api"] in COORDINATOR_APIS:
            r["broker"] = 3
        for item in (r.get("response") or {}).get("items", []):
            if item.get("key") == txn_id:
                item["node_id"] = 3
    lesson = object.__new__(TransactionLesson)
    return lesson.diagram(rows, roles=ROLES)


def _root(svg: str | None) -> ET.Element:
    assert svg is not None
    return ET.fromstring(svg)


def _drawn_text(root: ET.Element) -> list[str]:
    """Everything a viewer prints, one string per ``<text>`` (its tspans included)."""
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def _spans(root: ET.Element) -> list[list[str]]:
    """The ``<tspan>`` lines of each ``<text>`` that has some."""
    found = [[s.text or "" for s in t.iter(f"{SVG}tspan")] for t in root.iter(f"{SVG}text")]
    return [lines for lines in found if lines]


def _boxes(root: ET.Element, fill: str) -> list[tuple[float, float, float, float]]:
    """(x, y, width, height) of every rect filled ``fill``."""
    return [
        (float(r.get("x", 0)), float(r.get("y", 0)), float(r.get("width", 0)), float(r.get("height", 0)))
        for r in root.iter(f"{SVG}rect")
        if r.get("fill") == fill
    ]


def test_the_diagram_is_notebook_03s_with_a_role_under_each_broker() -> None:
    diagram = _notebook_03_diagram()
    assert "participant B3 as Broker 3<br/>(txn coordinator)" in diagram
    assert "participant B2 as Broker 2<br/>(leader of B)" in diagram
    assert "participant B1 as Broker 1<br/>(leader of A, group coordinator)" in diagram


def test_a_participant_label_with_br_is_drawn_as_lines_never_as_the_tag() -> None:
    root = _root(sequence_svg(_notebook_03_diagram()))
    assert not [t for t in _drawn_text(root) if "<br" in t]
    spans = _spans(root)
    for broker, role in ROLES.items():
        assert spans.count([f"Broker {broker}", f"({role})"]) == 2, broker  # the box on top and at the bottom


def test_participant_boxes_never_overlap_and_hold_their_lines() -> None:
    root = _root(sequence_svg(_notebook_03_diagram()))
    boxes = _boxes(root, "#eaeaff")
    rows: dict[float, list[tuple[float, float, float, float]]] = {}
    for box in boxes:
        rows.setdefault(box[1], []).append(box)
    assert len(rows) == 2 and all(len(row) == 4 for row in rows.values())  # client + 3 brokers, top and bottom
    for row in rows.values():
        row.sort()
        for (x1, _, w1, _), (x2, _, _, _) in pairwise(row):
            assert x1 + w1 < x2, f"box at x={x1:.0f} (width {w1:.0f}) reaches over the next one at x={x2:.0f}"
    for row in rows.values():  # wider than any 12 px sans-serif could print its longest line in
        assert all(w > 5 * max(map(len, name.split("<br/>"))) for (_, _, w, _), name in zip(row, NAMES, strict=True))
    for text in root.iter(f"{SVG}text"):
        ys = [float(s.get("y", 0)) for s in text.iter(f"{SVG}tspan")]
        if len(ys) < 2:
            continue
        x = float(text.get("x", 0))
        holder = [b for b in boxes if b[0] < x < b[0] + b[2] and b[1] < min(ys) - 9 and max(ys) + 3 < b[1] + b[3]]
        assert len(holder) == 1, f"the lines of {''.join(text.itertext())!r} are not inside one box"


@pytest.mark.parametrize("tag", ["<br/>", "<br>", "<br />"])
def test_every_spelling_of_br_breaks_a_message_and_a_note(tag: str) -> None:
    svg = sequence_svg(
        f"sequenceDiagram\n    participant C as consumer{tag}(read_committed)\n"
        f"    C->>B1: Fetch{tag}from offset 0\n    Note over C: two{tag}lines"
    )
    root = _root(svg)
    assert not [t for t in _drawn_text(root) if "<br" in t]
    spans = _spans(root)
    assert ["consumer", "(read_committed)"] in spans and ["Fetch", "from offset 0"] in spans
    assert ["two", "lines"] in spans


def test_a_flowchart_title_and_edge_label_break_at_br() -> None:
    root = _root(
        flowchart_svg(
            'flowchart TB\n  subgraph Q["KRaft quorum<br/>(__cluster_metadata)"]\n    c1["controller-1"]\n  end\n'
            '  subgraph B["Brokers"]\n    b1["Broker 1<br/>running"]\n  end\n  Q -- metadata<br/>records --> B'
        )
    )
    assert not [t for t in _drawn_text(root) if "<br" in t]
    spans = _spans(root)
    assert ["KRaft quorum", "(__cluster_metadata)"] in spans and ["metadata", "records"] in spans


def test_a_state_transition_label_breaks_at_br() -> None:
    root = _root(state_svg("stateDiagram-v2\n    [*] --> Empty\n    Empty --> Ongoing : 3×<br/>epoch +1"))
    texts = _drawn_text(root)
    assert not [t for t in texts if "<br" in t]
    assert "3×" in texts and "epoch +1" in texts
    assert mermaid_svg("stateDiagram-v2\n    Empty --> Ongoing : a<br>b") is not None


def test_text_width_follows_the_glyphs_not_the_character_count() -> None:
    """Boxes are sized from this: every printable ASCII glyph has its own width, anything else a whole em."""
    from eoslab._mermaid_svg._draw import FONT_PX, text_w

    ascii_glyphs = "".join(map(chr, range(32, 127)))
    assert all(text_w(c) > 0 for c in ascii_glyphs)
    assert text_w("MMMM") > 2 * text_w("iiii")
    assert text_w("★") >= FONT_PX
    assert text_w("Broker 3 (txn coordinator)") == pytest.approx(text_w("Broker 3") + text_w(" (txn coordinator)"))
