"""``stateDiagram-v2`` of transitions: states in rows by their distance from the start, arrows between them.

A transition to the next row is a straight arrow; any other (back to an earlier state, or skipping rows)
is a curve out to the side, so that it crosses no box. Parallel transitions share one arrow and list
their labels one per line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eoslab._mermaid_svg._draw import BOX_H, LINE_H, PAD, frame, lines_of, lines_w, text, text_w

START, END = "[*] start", "[*] end"
MIN_BOX_W = 110.0
GAP_Y = 90.0

_TRANSITION = re.compile(r"^(\[\*\]|\w+)\s*-->\s*(\[\*\]|\w+)\s*(?::\s*(.*))?$")

_Edge = tuple[str, str, list[str]]  # (from, to, the label's lines: one or more per merged transition)
_Point = tuple[float, float]


def _transition(line: str) -> _Edge | None:
    """``A --> B : label`` as an edge, ``[*]`` named as the start or the end; None if it is not one."""
    m = _TRANSITION.match(line)
    if m is None:
        return None
    a, b, label = m.group(1), m.group(2), (m.group(3) or "").strip()
    return (START if a == "[*]" else a, END if b == "[*]" else b, lines_of(label) if label else [])


def _parse(diagram: str) -> list[_Edge] | None:
    """The transitions, parallel ones merged into one edge; None for syntax this module does not draw."""
    lines = [ln.strip() for ln in diagram.strip().splitlines()]
    if not lines or lines[0] not in ("stateDiagram-v2", "stateDiagram"):
        return None
    merged: dict[tuple[str, str], list[str]] = {}
    for line in lines[1:]:
        if not line or line.startswith("%%"):
            continue
        edge = _transition(line)
        if edge is None:
            return None
        merged.setdefault(edge[:2], []).extend(edge[2])
    return [(a, b, labels) for (a, b), labels in merged.items()] or None


def _state_rows(edges: list[_Edge]) -> list[list[str]]:
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


@dataclass(frozen=True)
class _Layout:
    box_w: float
    width: float
    height: float
    pos: dict[str, _Point]  # each state's box: (centre x, top y)
    row_of: dict[str, int]


def _layout(edges: list[_Edge]) -> _Layout:
    rows = _state_rows(edges)
    box_w = max([text_w(s) + 2 * PAD for row in rows for s in row] + [MIN_BOX_W])
    label_w = max([lines_w(labels) for _, _, labels in edges] + [0.0])
    gap_x = max(box_w * 0.6, 60.0)
    margin = PAD + min(label_w, 220.0) + 60  # room for the curves and their labels on both sides
    inner = max(len(r) for r in rows) * (box_w + gap_x) - gap_x
    pos: dict[str, _Point] = {}
    for i, row in enumerate(rows):
        row_w = len(row) * (box_w + gap_x) - gap_x
        for j, s in enumerate(row):
            pos[s] = (margin + (inner - row_w) / 2 + j * (box_w + gap_x) + box_w / 2, PAD + i * (BOX_H + GAP_Y))
    height = len(rows) * (BOX_H + GAP_Y) - GAP_Y + 2 * PAD
    row_of = {s: i for i, row in enumerate(rows) for s in row}
    return _Layout(box_w, inner + 2 * margin, height, pos, row_of)


def _loop(a: _Point, labels: list[str], lay: _Layout) -> tuple[str, _Point]:
    """A state to itself: a loop on its right side, the label right of it."""
    ya, x0 = a[1], a[0] + lay.box_w / 2
    path = f"M{x0:.0f},{ya + 8:.0f} C{x0 + 55:.0f},{ya - 18:.0f} {x0 + 55:.0f},{ya + BOX_H + 18:.0f} "
    path += f"{x0:.0f},{ya + BOX_H - 8:.0f}"
    return path, (x0 + 42 + lines_w(labels) / 2, ya + BOX_H / 2)


def _straight(a: _Point, b: _Point) -> tuple[str, _Point]:
    """One row down: bottom edge to top edge; the label nearer the target, so labels of arrows out of
    one state stand apart."""
    p0, p3 = (a[0], a[1] + BOX_H), b
    path = f"M{p0[0]:.0f},{p0[1]:.0f} L{p3[0]:.0f},{p3[1]:.0f}"
    return path, (0.35 * p0[0] + 0.65 * p3[0], 0.35 * p0[1] + 0.65 * p3[1])


def _curve(k: int, a: _Point, b: _Point, lay: _Layout) -> tuple[str, _Point]:
    """Out to the side and back: right for the right half of the picture, left otherwise; the ``k``-th
    edge bulges a little further than its neighbours, so curves side by side stay apart."""
    side = 1 if a[0] >= lay.width / 2 else -1
    bulge = side * (lay.box_w / 2 + 40 + 18 * (k % 4))
    p0, p3 = (a[0] + side * lay.box_w / 2, a[1] + BOX_H / 2), (b[0] + side * lay.box_w / 2, b[1] + BOX_H / 2)
    c1, c2 = (p0[0] + bulge, p0[1]), (p3[0] + bulge, p3[1])
    path = f"M{p0[0]:.0f},{p0[1]:.0f} C{c1[0]:.0f},{c1[1]:.0f} {c2[0]:.0f},{c2[1]:.0f} {p3[0]:.0f},{p3[1]:.0f}"
    return path, (0.125 * p0[0] + 0.375 * (c1[0] + c2[0]) + 0.125 * p3[0], (p0[1] + p3[1]) / 2)


def _edge(k: int, edge: _Edge, lay: _Layout) -> tuple[str, _Point]:
    """The ``k``-th edge's path, and where its label goes."""
    a, b, labels = edge
    if a == b:
        return _loop(lay.pos[a], labels, lay)
    if lay.row_of[b] == lay.row_of[a] + 1:
        return _straight(lay.pos[a], lay.pos[b])
    return _curve(k, lay.pos[a], lay.pos[b], lay)


def _draw_label(labels: list[str], mid: _Point) -> list[str]:
    """One ``<text>`` per line on a white patch, so no arrow runs through the words."""
    if not labels:
        return []
    w, h = lines_w(labels) + 8, LINE_H * len(labels)
    top = mid[1] - h / 2
    patch = f"<rect x='{mid[0] - w / 2:.0f}' y='{top:.0f}' width='{w:.0f}' height='{h}' fill='white'/>"
    return [patch, *(text(mid[0], top + 12 + LINE_H * i, t) for i, t in enumerate(labels))]


def _draw_state(s: str, at: _Point, box_w: float) -> list[str]:
    """A box with the state's name; the start a dot, the end a ringed dot."""
    x, cy = at[0], at[1] + BOX_H / 2
    if s == START:
        return [f"<circle cx='{x:.0f}' cy='{cy:.0f}' r='9' fill='#333'/>"]
    if s == END:
        return [
            f"<circle cx='{x:.0f}' cy='{cy:.0f}' r='10' fill='white' stroke='#333'/>",
            f"<circle cx='{x:.0f}' cy='{cy:.0f}' r='6' fill='#333'/>",
        ]
    return [
        f"<rect x='{x - box_w / 2:.0f}' y='{at[1]:.0f}' width='{box_w:.0f}' height='{BOX_H}' rx='10' "
        "fill='#eaeaff' stroke='#9370db'/>",
        text(x, cy + 4, s),
    ]


def state_svg(diagram: str) -> str | None:
    """An SVG of a ``stateDiagram-v2`` of transitions: states in rows, the start on top; a transition to
    the next row is a straight arrow, any other (back to an earlier state, or skipping rows) a curve."""
    edges = _parse(diagram)
    if edges is None:
        return None
    lay = _layout(edges)
    paths, labels = [], []
    for k, edge in enumerate(edges):
        path, mid = _edge(k, edge, lay)
        paths.append(f"<path d='{path}' fill='none' stroke='#333' marker-end='url(#eos-state-head)'/>")
        labels += _draw_label(edge[2], mid)
    states = [el for s, at in lay.pos.items() for el in _draw_state(s, at, lay.box_w)]
    # the labels last, so that no line crosses one
    return frame(lay.width, lay.height, "State diagram", "eos-state-head", "auto", [*paths, *states, *labels])
