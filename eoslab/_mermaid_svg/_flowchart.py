"""``flowchart`` (the cluster view): each subgraph a row of boxes, edges between the rows.

Every box is as wide as the widest line of any node and as tall as its group's node with the most
lines; a subgraph's title or an edge's label of several lines makes its group, or the gap under it, taller.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

from eoslab._mermaid_svg._draw import LINE_H, PAD, centred_baseline, frame, lines_of, lines_w, text

MIN_BOX_W = 120.0
GROUP_GAP = 50.0  # between two groups: room for the arrow and one line of its label

_SUBGRAPH = re.compile(r'^subgraph\s+(\w+)\s*(?:\["(.*)"\])?$')
_NODE = re.compile(r'^(\w+)\s*\["(.*)"\]$')
_EDGE = re.compile(r"^(\w+)\s*--\s*(.*?)\s*-->\s*(\w+)$|^(\w+)\s*-->\s*(\w+)$")
_STYLE = re.compile(r"^style\s+(\w+)\s+(.*)$")


@dataclass
class _Group:
    id: str
    title: list[str]
    nodes: list[tuple[str, list[str]]] = field(default_factory=list)  # (id, the text's lines)

    @property
    def node_h(self) -> float:
        return max([len(lines) for _, lines in self.nodes] + [1]) * LINE_H + 20

    @property
    def title_h(self) -> float:
        """The title's lines after the first."""
        return LINE_H * (len(self.title) - 1)


@dataclass
class _Flow:
    groups: list[_Group] = field(default_factory=list)
    edges: list[tuple[str, list[str], str]] = field(default_factory=list)  # (from, label lines, to)
    styles: dict[str, dict[str, str]] = field(default_factory=dict)
    open: _Group | None = None  # the subgraph being read

    def read(self, line: str) -> bool:
        """Take one line of the diagram; False for a construct this renderer does not know."""
        return any((m := pattern.match(line)) is not None and take(self, m) for pattern, take in _READERS)

    def _subgraph(self, m: re.Match[str]) -> bool:
        self.open = _Group(m.group(1), lines_of(m.group(2) or m.group(1)))
        self.groups.append(self.open)
        return True

    def _end(self, m: re.Match[str]) -> bool:
        self.open = None
        return True

    def _node(self, m: re.Match[str]) -> bool:
        """A node inside a subgraph (one outside is not this construct)."""
        if self.open is None:
            return False
        self.open.nodes.append((m.group(1), lines_of(m.group(2))))
        return True

    def _edge(self, m: re.Match[str]) -> bool:
        a, label, b = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(4), "", m.group(5))
        self.edges.append((a, lines_of(label) if label else [], b))
        return True

    def _style(self, m: re.Match[str]) -> bool:
        self.styles[m.group(1)] = dict(kv.split(":", 1) for kv in m.group(2).split(",") if ":" in kv)
        return True


_READERS: tuple[tuple[re.Pattern[str], Callable[[_Flow, re.Match[str]], bool]], ...] = (
    (_SUBGRAPH, _Flow._subgraph),
    (re.compile(r"end\Z"), _Flow._end),
    (_NODE, _Flow._node),
    (_EDGE, _Flow._edge),
    (_STYLE, _Flow._style),
)
"""The constructs a flowchart line can be, tried in order: the first that takes the line wins."""


def _parse(diagram: str) -> _Flow | None:
    lines = [ln.strip() for ln in diagram.strip().splitlines()]
    if not lines or not lines[0].startswith("flowchart"):
        return None
    flow = _Flow()
    for line in lines[1:]:
        if line and not line.startswith("%%") and not flow.read(line):
            return None
    return flow if flow.groups else None


@dataclass(frozen=True)
class _Layout:
    box_w: float
    width: float
    spans: dict[str, tuple[float, float]]  # group id -> (top, bottom)
    height: float


def _layout(flow: _Flow) -> _Layout:
    box_w = max([lines_w(lines) + 2 * PAD for g in flow.groups for _, lines in g.nodes] + [MIN_BOX_W])
    widest_row = max(len(g.nodes) for g in flow.groups) * (box_w + PAD) + 3 * PAD
    width = max(widest_row, max(lines_w(g.title) for g in flow.groups) + 4 * PAD)
    gap = GROUP_GAP + LINE_H * max([len(label) - 1 for _, label, _ in flow.edges] + [0])
    spans, y = {}, float(PAD)
    for g in flow.groups:
        h = g.node_h + 44 + g.title_h
        spans[g.id] = (y, y + h)
        y += h + gap
    return _Layout(box_w, width, spans, y - gap + PAD)


def _draw_group(g: _Group, styles: dict[str, dict[str, str]], lay: _Layout) -> list[str]:
    """The group's frame and title, and its nodes side by side, centred."""
    y, bottom = lay.spans[g.id]
    out = [
        f"<rect x='{PAD}' y='{y:.0f}' width='{lay.width - 2 * PAD:.0f}' height='{bottom - y:.0f}' "
        "fill='#fafafa' stroke='#bbb'/>",
        text(lay.width / 2, y + 16, g.title, extra=" font-weight='bold'"),
    ]
    node_y = y + 28 + g.title_h
    x = PAD + (lay.width - 2 * PAD - len(g.nodes) * (lay.box_w + PAD) + PAD) / 2
    for nid, lines in g.nodes:
        st = styles.get(nid, {})
        fill, stroke = st.get("fill", "#eaeaff"), st.get("stroke", "#9370db")
        out.append(
            f"<rect x='{x:.0f}' y='{node_y:.0f}' width='{lay.box_w:.0f}' height='{g.node_h:.0f}' rx='4' "
            f"fill='{escape(fill)}' stroke='{escape(stroke)}'/>"
        )
        out.extend(text(x + lay.box_w / 2, node_y + 18 + LINE_H * k, t) for k, t in enumerate(lines))
        x += lay.box_w + PAD
    return out


def _draw_edge(a: str, label: list[str], b: str, lay: _Layout) -> list[str]:
    """An arrow from the bottom of group ``a`` to the top of group ``b``, its label beside it."""
    if a not in lay.spans or b not in lay.spans:
        return []
    y1, y2, x = lay.spans[a][1], lay.spans[b][0], lay.width / 2
    out = [
        f"<line x1='{x:.0f}' y1='{y1:.0f}' x2='{x:.0f}' y2='{y2:.0f}' stroke='#333' marker-end='url(#eos-flow-head)'/>"
    ]
    if label:
        out.append(text(x + 8, centred_baseline(y1, y2 - y1, len(label)), label, anchor="start"))
    return out


def flowchart_svg(diagram: str) -> str | None:
    """An SVG of the kit's cluster ``flowchart``: each subgraph a row of boxes, edges between rows."""
    flow = _parse(diagram)
    if flow is None:
        return None
    lay = _layout(flow)
    body = [el for g in flow.groups for el in _draw_group(g, flow.styles, lay)]
    body += [el for a, label, b in flow.edges for el in _draw_edge(a, label, b, lay)]
    return frame(lay.width, lay.height, "Cluster diagram", "eos-flow-head", "auto", body)
