"""A static SVG of the Mermaid diagrams the kit writes, drawn here in Python, for readers without Mermaid.

JupyterLab (4.1+) renders Mermaid live; GitHub's notebook preview, ``jupyter nbconvert --to html``
and most other viewers do not, and show the diagram's source text. So :func:`eoslab.show_mermaid`
gives each diagram an ``image/svg+xml`` twin drawn by this module: the same participants, arrows
and notes, laid out simply. It reads only the subset of Mermaid the kit itself emits:

- ``sequenceDiagram`` (protocol traces): ``participant A as Name``, messages ``->>``, ``-->>``,
  ``-x``, ``--x`` (a lost message ends in a cross), ``->``, ``-->``, and ``Note over A[,B]: text``;
- ``flowchart`` (the cluster view): ``subgraph ID["title"]`` … ``end`` holding nodes ``ID["text"]``
  (``<br/>`` breaks lines), one edge line ``X -- label --> Y`` and ``style ID fill:…,stroke:…``;
- ``stateDiagram-v2`` (the transaction coordinator's states): transitions ``A --> B`` with an optional
  ``: label``, ``[*]`` as the start (or, as a target, the end).

Anything else returns ``None`` and the viewer keeps the source text. Pure functions, no
dependencies: the offline bundle and a fresh laptop render the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

FONT = "font-family='Helvetica, Arial, sans-serif' font-size='12'"
CHAR_W = 7.0  # generous average width of a 12 px sans-serif glyph: labels never overflow their column
ROW_H = 30
BOX_H = 32
PAD = 16

_PARTICIPANT = re.compile(r"^participant\s+(\w+)(?:\s+as\s+(.+))?$")
_MESSAGE = re.compile(r"^(\w+)\s*(-->>|->>|--x|-x|-->|->|--\)|-\))\s*(\w+)\s*:\s*(.*)$")
_NOTE = re.compile(r"^Note\s+(over|left of|right of)\s+(\w+)(?:\s*,\s*(\w+))?\s*:\s*(.*)$", re.IGNORECASE)


@dataclass
class _Sequence:
    participants: dict[str, str] = field(default_factory=dict)  # alias -> shown name, in order
    events: list[tuple[str, ...]] = field(default_factory=list)  # ("msg", src, arrow, dst, text) | ("note", a, b, text)

    def add(self, alias: str) -> None:
        self.participants.setdefault(alias, alias)


def _parse_sequence(lines: list[str]) -> _Sequence | None:
    seq = _Sequence()
    for raw in lines[1:]:
        line = raw.strip()
        if not line or line.startswith("%%") or line == "autonumber":
            continue
        if m := _PARTICIPANT.match(line):
            seq.participants[m.group(1)] = (m.group(2) or m.group(1)).strip()
        elif m := _MESSAGE.match(line):
            src, arrow, dst, text = m.groups()
            seq.add(src)
            seq.add(dst)
            seq.events.append(("msg", src, arrow, dst, text))
        elif m := _NOTE.match(line):
            _, a, b, text = m.groups()
            seq.add(a)
            if b:
                seq.add(b)
            seq.events.append(("note", a, b or a, text))
        else:
            return None  # a construct this renderer does not know: better no picture than a wrong one
    return seq if seq.participants else None


def _text_w(text: str) -> float:
    return len(text) * CHAR_W


def _t(x: float, y: float, text: str, anchor: str = "middle", extra: str = "") -> str:
    return f"<text x='{x:.0f}' y='{y:.0f}' text-anchor='{anchor}' {FONT}{extra}>{escape(text)}</text>"


def sequence_svg(diagram: str) -> str | None:
    """An SVG of a ``sequenceDiagram``, or None if it uses syntax this module does not draw."""
    lines = diagram.strip().splitlines()
    if not lines or lines[0].strip() != "sequenceDiagram":
        return None
    seq = _parse_sequence(lines)
    if seq is None:
        return None
    aliases = list(seq.participants)
    col = {a: i for i, a in enumerate(aliases)}
    # Column gaps: each gap is at least as wide as the widest label of a message that spans only it;
    # a label spanning several gaps gets its share of each.
    gaps = [max(_text_w(seq.participants[a]) + 2 * PAD, 140.0) for a in aliases[:-1]]
    for ev in seq.events:
        if ev[0] == "msg":
            lo, hi = sorted((col[ev[1]], col[ev[3]]))
            if hi > lo:
                need = (_text_w(ev[4]) + 2 * PAD) / (hi - lo)
                for g in range(lo, hi):
                    gaps[g] = max(gaps[g], need)
    first_w = max(_text_w(seq.participants[aliases[0]]) + 2 * PAD, 100.0)
    xs = [PAD + first_w / 2]
    for gap in gaps:
        xs.append(xs[-1] + gap)
    last_w = max(_text_w(seq.participants[aliases[-1]]) + 2 * PAD, 100.0)
    notes_w = max([_text_w(ev[3]) + 2 * PAD for ev in seq.events if ev[0] == "note"] or [0.0])
    width = max(xs[-1] + last_w / 2 + PAD, xs[0] + notes_w / 2 + PAD)
    top: float = PAD + BOX_H
    height = top + ROW_H * (len(seq.events) + 1) + BOX_H + 2 * PAD

    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
        f"viewBox='0 0 {width:.0f} {height:.0f}'>",
        "<title>Sequence diagram (static copy of the Mermaid diagram, drawn by eoslab)</title>",
        "<defs><marker id='eos-seq-head' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='8' markerHeight='8' "
        "orient='auto-start-reverse'><path d='M0,0 L10,5 L0,10 z' fill='#333'/></marker></defs>",
        f"<rect width='{width:.0f}' height='{height:.0f}' fill='white'/>",
    ]
    bottom = height - PAD - BOX_H
    for a, x in zip(aliases, xs, strict=True):
        name = seq.participants[a]
        w = max(_text_w(name) + 2 * PAD, 100.0)
        out.append(
            f"<line x1='{x:.0f}' y1='{top}' x2='{x:.0f}' y2='{bottom:.0f}' stroke='#999' stroke-dasharray='3,3'/>"
        )
        for y in (PAD, bottom):
            out.append(
                f"<rect x='{x - w / 2:.0f}' y='{y:.0f}' width='{w:.0f}' height='{BOX_H}' rx='3' "
                "fill='#eaeaff' stroke='#9370db'/>"
            )
            out.append(_t(x, y + BOX_H / 2 + 4, name))
    for i, ev in enumerate(seq.events):
        y = top + ROW_H * (i + 1)
        if ev[0] == "note":
            xa, xb = sorted((xs[col[ev[1]]], xs[col[ev[2]]]))
            w = max(_text_w(ev[3]) + 2 * PAD, xb - xa + 2 * PAD)
            cx = (xa + xb) / 2
            out.append(
                f"<rect x='{cx - w / 2:.0f}' y='{y - 18:.0f}' width='{w:.0f}' height='22' "
                "fill='#fff5ad' stroke='#aaaa33'/>"
            )
            out.append(_t(cx, y - 3, ev[3]))
            continue
        _, src, arrow, dst, text = ev
        x1, x2 = xs[col[src]], xs[col[dst]]
        dashed = " stroke-dasharray='6,4'" if arrow.startswith("--") else ""
        lost = arrow.endswith("x")
        if x1 == x2:  # a message to oneself: a small loop
            out.append(
                f"<path d='M{x1:.0f},{y - 6} h40 v12 h-40' fill='none' stroke='#333'{dashed} "
                "marker-end='url(#eos-seq-head)'/>"
            )
            out.append(_t(x1 + 46, y - 8, text, anchor="start"))
            continue
        head = "" if lost else " marker-end='url(#eos-seq-head)'"
        out.append(f"<line x1='{x1:.0f}' y1='{y}' x2='{x2:.0f}' y2='{y}' stroke='#333'{dashed}{head}/>")
        if lost:  # Mermaid's "x" end: the message never arrived
            d = 5
            out.append(
                f"<path d='M{x2 - d:.0f},{y - d} L{x2 + d:.0f},{y + d} M{x2 - d:.0f},{y + d} L{x2 + d:.0f},{y - d}' "
                "stroke='#c00' stroke-width='2'/>"
            )
        out.append(_t((x1 + x2) / 2, y - 6, text, extra=" fill='#c00'" if lost else ""))
    out.append("</svg>")
    return "\n".join(out)


_SUBGRAPH = re.compile(r'^subgraph\s+(\w+)\s*(?:\["(.*)"\])?$')
_NODE = re.compile(r'^(\w+)\s*\["(.*)"\]$')
_EDGE = re.compile(r"^(\w+)\s*--\s*(.*?)\s*-->\s*(\w+)$|^(\w+)\s*-->\s*(\w+)$")
_STYLE = re.compile(r"^style\s+(\w+)\s+(.*)$")


def flowchart_svg(diagram: str) -> str | None:
    """An SVG of the kit's cluster ``flowchart``: each subgraph a row of boxes, edges between rows."""
    lines = [ln.strip() for ln in diagram.strip().splitlines()]
    if not lines or not lines[0].startswith("flowchart"):
        return None
    groups: list[tuple[str, str, list[tuple[str, list[str]]]]] = []
    edges: list[tuple[str, str, str]] = []
    styles: dict[str, dict[str, str]] = {}
    current: list[tuple[str, list[str]]] | None = None
    for line in lines[1:]:
        if not line or line.startswith("%%"):
            continue
        if m := _SUBGRAPH.match(line):
            current = []
            groups.append((m.group(1), m.group(2) or m.group(1), current))
        elif line == "end":
            current = None
        elif (m := _NODE.match(line)) and current is not None:
            current.append((m.group(1), re.split(r"<br\s*/?>", m.group(2))))
        elif m := _EDGE.match(line):
            a, label, b = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), "", m.group(5))
            edges.append((a, label, b))
        elif m := _STYLE.match(line):
            styles[m.group(1)] = dict(kv.split(":", 1) for kv in m.group(2).split(",") if ":" in kv)
        else:
            return None
    if not groups:
        return None
    box_w = max([_text_w(t) + 2 * PAD for _, _, nodes in groups for _, ts in nodes for t in ts] + [120.0])
    row_h = {g: max([len(ts) for _, ts in nodes] + [1]) * 16 + 20 for g, _, nodes in groups}
    width = max(len(nodes) for _, _, nodes in groups) * (box_w + PAD) + 3 * PAD
    out_rows, y = [], PAD
    group_y: dict[str, tuple[float, float]] = {}
    for gid, title, nodes in groups:
        h = row_h[gid] + 44
        out_rows.append(
            f"<rect x='{PAD}' y='{y}' width='{width - 2 * PAD:.0f}' height='{h}' fill='#fafafa' stroke='#bbb'/>"
        )
        out_rows.append(_t(width / 2, y + 16, title, extra=" font-weight='bold'"))
        x = PAD + (width - 2 * PAD - len(nodes) * (box_w + PAD) + PAD) / 2
        for nid, texts in nodes:
            st = styles.get(nid, {})
            fill, stroke = st.get("fill", "#eaeaff"), st.get("stroke", "#9370db")
            out_rows.append(
                f"<rect x='{x:.0f}' y='{y + 28}' width='{box_w:.0f}' height='{row_h[gid]}' rx='4' "
                f"fill='{escape(fill)}' stroke='{escape(stroke)}'/>"
            )
            for k, t in enumerate(texts):
                out_rows.append(_t(x + box_w / 2, y + 28 + 18 + 16 * k, t))
            x += box_w + PAD
        group_y[gid] = (y, y + h)
        y += h + 50
    height = y - 50 + PAD
    for a, label, b in edges:
        if a in group_y and b in group_y:
            y1, y2 = group_y[a][1], group_y[b][0]
            out_rows.append(
                f"<line x1='{width / 2:.0f}' y1='{y1:.0f}' x2='{width / 2:.0f}' y2='{y2:.0f}' stroke='#333' "
                "marker-end='url(#eos-flow-head)'/>"
            )
            if label:
                out_rows.append(_t(width / 2 + 8, (y1 + y2) / 2 + 4, label, anchor="start"))
    head = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
        f"viewBox='0 0 {width:.0f} {height:.0f}'>",
        "<title>Cluster diagram (static copy of the Mermaid diagram, drawn by eoslab)</title>",
        "<defs><marker id='eos-flow-head' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='8' markerHeight='8' "
        "orient='auto'><path d='M0,0 L10,5 L0,10 z' fill='#333'/></marker></defs>",
        f"<rect width='{width:.0f}' height='{height:.0f}' fill='white'/>",
    ]
    return "\n".join([*head, *out_rows, "</svg>"])


_TRANSITION = re.compile(r"^(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)\s*(?::\s*(.*))?$")
START, END = "[*] start", "[*] end"


def _state_rows(edges: list[tuple[str, str, str]]) -> list[list[str]]:
    """States in rows by their distance from the start (breadth first); unreachable ones last."""
    order = list(dict.fromkeys(s for a, b, _ in edges for s in (a, b)))
    depth = {START: 0} if START in order else {order[0]: 0}
    frontier = list(depth)
    while frontier:
        nxt = []
        for a, b, _ in edges:
            if a in frontier and b not in depth:
                depth[b] = depth[a] + 1
                nxt.append(b)
        frontier = nxt
    last = max(depth.values()) + 1
    rows: dict[int, list[str]] = {}
    for s in order:
        rows.setdefault(depth.get(s, last), []).append(s)
    return [rows[k] for k in sorted(rows)]


def state_svg(diagram: str) -> str | None:
    """An SVG of a ``stateDiagram-v2`` of transitions: states in rows, the start on top; a transition to
    the next row is a straight arrow, any other (back to an earlier state, or skipping rows) a curve."""
    lines = [ln.strip() for ln in diagram.strip().splitlines()]
    if not lines or lines[0] not in ("stateDiagram-v2", "stateDiagram"):
        return None
    edges: list[tuple[str, str, str]] = []
    for line in lines[1:]:
        if not line or line.startswith("%%"):
            continue
        m = _TRANSITION.match(line)
        if m is None:
            return None
        a, b, label = m.group(1), m.group(2), (m.group(3) or "").strip()
        edges.append((START if a == "[*]" else a, END if b == "[*]" else b, label))
    if not edges:
        return None
    merged: dict[tuple[str, str], list[str]] = {}  # parallel transitions: one arrow, their labels joined
    for a, b, label in edges:
        merged.setdefault((a, b), []).extend([label] if label else [])
    edges = [(a, b, "; ".join(labels)) for (a, b), labels in merged.items()]
    rows = _state_rows(edges)
    box_w = max([_text_w(s) + 2 * PAD for row in rows for s in row] + [110.0])
    label_w = max([_text_w(lb) for _, _, lb in edges] + [0.0])
    gap_x, gap_y = max(box_w * 0.6, 60.0), 90.0
    margin = PAD + min(label_w, 220.0) + 60  # room for the curves and their labels on both sides
    inner = max(len(r) for r in rows) * (box_w + gap_x) - gap_x
    width, height = inner + 2 * margin, len(rows) * (BOX_H + gap_y) - gap_y + 2 * PAD
    pos: dict[str, tuple[float, float]] = {}
    for i, row in enumerate(rows):
        row_w = len(row) * (box_w + gap_x) - gap_x
        for j, s in enumerate(row):
            pos[s] = (margin + (inner - row_w) / 2 + j * (box_w + gap_x) + box_w / 2, PAD + i * (BOX_H + gap_y))
    row_of = {s: i for i, row in enumerate(rows) for s in row}
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
        f"viewBox='0 0 {width:.0f} {height:.0f}'>",
        "<title>State diagram (static copy of the Mermaid diagram, drawn by eoslab)</title>",
        "<defs><marker id='eos-state-head' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='8' "
        "markerHeight='8' orient='auto'><path d='M0,0 L10,5 L0,10 z' fill='#333'/></marker></defs>",
        f"<rect width='{width:.0f}' height='{height:.0f}' fill='white'/>",
    ]
    labels = []
    for k, (a, b, label) in enumerate(edges):
        (xa, ya), (xb, yb) = pos[a], pos[b]
        if a == b:  # a state to itself: a loop on its right side
            x0 = xa + box_w / 2
            path = f"M{x0:.0f},{ya + 8:.0f} C{x0 + 55:.0f},{ya - 18:.0f} {x0 + 55:.0f},{ya + BOX_H + 18:.0f} "
            path += f"{x0:.0f},{ya + BOX_H - 8:.0f}"
            mid = (x0 + 42 + _text_w(label) / 2, ya + BOX_H / 2)
        elif row_of[b] == row_of[a] + 1:  # one row down: a straight arrow, bottom edge to top edge
            p0, p3 = (xa, ya + BOX_H), (xb, yb)
            path = f"M{p0[0]:.0f},{p0[1]:.0f} L{p3[0]:.0f},{p3[1]:.0f}"
            mid = (0.35 * p0[0] + 0.65 * p3[0], 0.35 * p0[1] + 0.65 * p3[1])  # nearer the target: apart
        else:  # a curve out to the side: right for the right half of the picture, left otherwise
            side = 1 if xa >= width / 2 else -1
            bulge = side * (box_w / 2 + 40 + 18 * (k % 4))
            p0, p3 = (xa + side * box_w / 2, ya + BOX_H / 2), (xb + side * box_w / 2, yb + BOX_H / 2)
            c1, c2 = (p0[0] + bulge, p0[1]), (p3[0] + bulge, p3[1])
            path = f"M{p0[0]:.0f},{p0[1]:.0f} C{c1[0]:.0f},{c1[1]:.0f} {c2[0]:.0f},{c2[1]:.0f} {p3[0]:.0f},{p3[1]:.0f}"
            mid = (0.125 * p0[0] + 0.375 * (c1[0] + c2[0]) + 0.125 * p3[0], (p0[1] + p3[1]) / 2)
        out.append(f"<path d='{path}' fill='none' stroke='#333' marker-end='url(#eos-state-head)'/>")
        parts = label.split("; ") if label else []  # one line per merged transition
        if parts:
            w, h = max(_text_w(t) for t in parts) + 8, 15 * len(parts)
            top = mid[1] - h / 2
            labels.append(f"<rect x='{mid[0] - w / 2:.0f}' y='{top:.0f}' width='{w:.0f}' height='{h}' fill='white'/>")
            labels.extend(_t(mid[0], top + 12 + 15 * i, t) for i, t in enumerate(parts))
    for s, (x, y) in pos.items():
        if s == START:
            out.append(f"<circle cx='{x:.0f}' cy='{y + BOX_H / 2:.0f}' r='9' fill='#333'/>")
        elif s == END:
            out.append(f"<circle cx='{x:.0f}' cy='{y + BOX_H / 2:.0f}' r='10' fill='white' stroke='#333'/>")
            out.append(f"<circle cx='{x:.0f}' cy='{y + BOX_H / 2:.0f}' r='6' fill='#333'/>")
        else:
            out.append(
                f"<rect x='{x - box_w / 2:.0f}' y='{y:.0f}' width='{box_w:.0f}' height='{BOX_H}' rx='10' "
                "fill='#eaeaff' stroke='#9370db'/>"
            )
            out.append(_t(x, y + BOX_H / 2 + 4, s))
    out.extend(labels)  # last, so no line crosses a label
    out.append("</svg>")
    return "\n".join(out)


def mermaid_svg(diagram: str) -> str | None:
    """The static SVG of a diagram the kit wrote, or None when it is not one this module draws."""
    first = diagram.strip().splitlines()[0].strip() if diagram.strip() else ""
    if first == "sequenceDiagram":
        return sequence_svg(diagram)
    if first.startswith("flowchart"):
        return flowchart_svg(diagram)
    if first in ("stateDiagram-v2", "stateDiagram"):
        return state_svg(diagram)
    return None
