"""``sequenceDiagram``: read the kit's subset, lay out columns and rows from the text's width, draw.

Columns: every participant's box is as wide as its widest line, and two neighbouring lifelines are far
enough apart for both half-boxes and a gap, and for the label of every message between them. Rows: a
label of several lines makes its row taller, so nothing is drawn over anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise

from eoslab._mermaid_svg._draw import (
    BOX_H,
    LINE_H,
    PAD,
    ROW_H,
    centred_baseline,
    frame,
    lines_of,
    lines_w,
    text,
)

MIN_BOX_W = 100.0
MIN_GAP = 140.0  # between two lifelines, even when their boxes are narrow: room for an arrow
SELF_LABEL_DX = 46  # a message to oneself: its label starts this far right of the lifeline, past the loop

_PARTICIPANT = re.compile(r"^participant\s+(\w+)(?:\s+as\s+(.+))?$")
_MESSAGE = re.compile(r"^(\w+)\s*(-->>|->>|--x|-x|-->|->|--\)|-\))\s*(\w+)\s*:\s*(.*)$")
_NOTE = re.compile(r"^Note\s+(over|left of|right of)\s+(\w+)(?:\s*,\s*(\w+))?\s*:\s*(.*)$", re.IGNORECASE)


@dataclass(frozen=True)
class _Message:
    src: str
    arrow: str
    dst: str
    lines: list[str]


@dataclass(frozen=True)
class _Note:
    a: str
    b: str
    lines: list[str]


@dataclass
class _Sequence:
    participants: dict[str, list[str]] = field(default_factory=dict)  # alias -> its name's lines, in order
    events: list[_Message | _Note] = field(default_factory=list)

    def add(self, alias: str) -> None:
        self.participants.setdefault(alias, [alias])

    def read(self, line: str) -> bool:
        """Take one line of the diagram; False for a construct this renderer does not know."""
        if m := _PARTICIPANT.match(line):
            self.participants[m.group(1)] = lines_of((m.group(2) or m.group(1)).strip())
        elif m := _MESSAGE.match(line):
            src, arrow, dst, label = m.groups()
            self.add(src)
            self.add(dst)
            self.events.append(_Message(src, arrow, dst, lines_of(label)))
        elif m := _NOTE.match(line):
            _, a, b, label = m.groups()
            self.add(a)
            if b:
                self.add(b)
            self.events.append(_Note(a, b or a, lines_of(label)))
        else:
            return False
        return True


def _parse(diagram: str) -> _Sequence | None:
    lines = diagram.strip().splitlines()
    if not lines or lines[0].strip() != "sequenceDiagram":
        return None
    seq = _Sequence()
    for raw in lines[1:]:
        line = raw.strip()
        if not line or line.startswith("%%") or line == "autonumber":
            continue
        if not seq.read(line):
            return None  # better no picture than a wrong one
    return seq if seq.participants else None


@dataclass(frozen=True)
class _Layout:
    xs: dict[str, float]  # each participant's lifeline
    box_w: dict[str, float]
    box_h: float  # every participant's box: as tall as the one with the most lines
    ys: list[float]  # each event's arrow (or the top of its note, 18 px higher)
    bottom: float  # the top of the boxes at the foot of the lifelines
    width: float
    height: float


def _gaps(seq: _Sequence, box_w: dict[str, float]) -> list[float]:
    """The distance between each two neighbouring lifelines: both half-boxes and a gap, at least
    ``MIN_GAP``, and wide enough for every message label; one spanning several gaps takes its share of each."""
    aliases = list(seq.participants)
    col = {a: i for i, a in enumerate(aliases)}
    gaps = [max((box_w[a] + box_w[b]) / 2 + PAD, MIN_GAP) for a, b in pairwise(aliases)]
    for ev in seq.events:
        if isinstance(ev, _Message):
            lo, hi = sorted((col[ev.src], col[ev.dst]))
            for g in range(lo, hi):
                gaps[g] = max(gaps[g], (lines_w(ev.lines) + 2 * PAD) / (hi - lo))
    return gaps


def _note_box(note: _Note, xs: dict[str, float]) -> tuple[float, float]:
    """(centre, width) of a note: over its participants, and as wide as its text."""
    xa, xb = sorted((xs[note.a], xs[note.b]))
    return (xa + xb) / 2, max(lines_w(note.lines) + 2 * PAD, xb - xa + 2 * PAD)


def _columns(seq: _Sequence, box_w: dict[str, float]) -> tuple[dict[str, float], float]:
    """Each lifeline's x, shifted so that the leftmost box, note or label starts at ``PAD``; and the width
    that holds the rightmost one."""
    aliases = list(seq.participants)
    xs = {aliases[0]: 0.0}
    for (a, b), gap in zip(pairwise(aliases), _gaps(seq, box_w), strict=True):
        xs[b] = xs[a] + gap
    spans = [(xs[a] - box_w[a] / 2, xs[a] + box_w[a] / 2) for a in aliases]
    for ev in seq.events:
        if isinstance(ev, _Note):
            centre, w = _note_box(ev, xs)
            spans.append((centre - w / 2, centre + w / 2))
        elif ev.src == ev.dst:  # a message to oneself: its label is to the right of its loop
            spans.append((xs[ev.src], xs[ev.src] + SELF_LABEL_DX + lines_w(ev.lines)))
    shift = PAD - min(lo for lo, _ in spans)
    return {a: x + shift for a, x in xs.items()}, max(hi for _, hi in spans) + shift + PAD


def _above(ev: _Message | _Note) -> float:
    """How much higher than one line the event reaches above its y: a message's label stacks upwards."""
    return LINE_H * (len(ev.lines) - 1) if isinstance(ev, _Message) else 0.0


def _below(ev: _Message | _Note) -> float:
    """How much lower than one line the event reaches below its y: a note's box grows downwards."""
    return LINE_H * (len(ev.lines) - 1) if isinstance(ev, _Note) else 0.0


def _rows(events: list[_Message | _Note], top: float) -> tuple[list[float], float]:
    """Each event's y, one row apart plus the extra lines of the labels between them; and the bottom boxes' top."""
    ys, y, below = [], top, 0.0
    for ev in events:
        y += ROW_H + below + _above(ev)
        ys.append(y)
        below = _below(ev)
    return ys, y + ROW_H + below + PAD


def _layout(seq: _Sequence) -> _Layout:
    box_w = {a: max(lines_w(name) + 2 * PAD, MIN_BOX_W) for a, name in seq.participants.items()}
    box_h = BOX_H + LINE_H * (max(len(name) for name in seq.participants.values()) - 1)
    xs, width = _columns(seq, box_w)
    ys, bottom = _rows(seq.events, PAD + box_h)
    return _Layout(xs, box_w, box_h, ys, bottom, width, bottom + box_h + PAD)


def _draw_participants(seq: _Sequence, lay: _Layout) -> list[str]:
    """Each participant's lifeline, and its box at the top and at the foot of it."""
    out = []
    for a, name in seq.participants.items():
        x, w = lay.xs[a], lay.box_w[a]
        out.append(
            f"<line x1='{x:.0f}' y1='{PAD + lay.box_h:.0f}' x2='{x:.0f}' y2='{lay.bottom:.0f}' stroke='#999' "
            "stroke-dasharray='3,3'/>"
        )
        for y in (PAD, lay.bottom):
            out.append(
                f"<rect x='{x - w / 2:.0f}' y='{y:.0f}' width='{w:.0f}' height='{lay.box_h:.0f}' rx='3' "
                "fill='#eaeaff' stroke='#9370db'/>"
            )
            out.append(text(x, centred_baseline(y, lay.box_h, len(name)), name))
    return out


def _draw_note(note: _Note, y: float, lay: _Layout) -> list[str]:
    centre, w = _note_box(note, lay.xs)
    h = 22 + _below(note)
    return [
        f"<rect x='{centre - w / 2:.0f}' y='{y - 18:.0f}' width='{w:.0f}' height='{h:.0f}' "
        "fill='#fff5ad' stroke='#aaaa33'/>",
        text(centre, y - 3, note.lines),
    ]


def _draw_message(msg: _Message, y: float, lay: _Layout) -> list[str]:
    """An arrow with its label above it; Mermaid's ``x`` end (the message never arrived) is a red cross."""
    x1, x2 = lay.xs[msg.src], lay.xs[msg.dst]
    dashed = " stroke-dasharray='6,4'" if msg.arrow.startswith("--") else ""
    if msg.src == msg.dst:  # a message to oneself: a small loop
        return [
            f"<path d='M{x1:.0f},{y - 6:.0f} h40 v12 h-40' fill='none' stroke='#333'{dashed} "
            "marker-end='url(#eos-seq-head)'/>",
            text(x1 + SELF_LABEL_DX, y - 8 - _above(msg), msg.lines, anchor="start"),
        ]
    lost = msg.arrow.endswith("x")
    head = "" if lost else " marker-end='url(#eos-seq-head)'"
    out = [f"<line x1='{x1:.0f}' y1='{y:.0f}' x2='{x2:.0f}' y2='{y:.0f}' stroke='#333'{dashed}{head}/>"]
    if lost:
        d = 5
        out.append(
            f"<path d='M{x2 - d:.0f},{y - d:.0f} L{x2 + d:.0f},{y + d:.0f} M{x2 - d:.0f},{y + d:.0f} "
            f"L{x2 + d:.0f},{y - d:.0f}' stroke='#c00' stroke-width='2'/>"
        )
    out.append(text((x1 + x2) / 2, y - 6 - _above(msg), msg.lines, extra=" fill='#c00'" if lost else ""))
    return out


def sequence_svg(diagram: str) -> str | None:
    """An SVG of a ``sequenceDiagram``, or None if it uses syntax this module does not draw."""
    seq = _parse(diagram)
    if seq is None:
        return None
    lay = _layout(seq)
    body = _draw_participants(seq, lay)
    for ev, y in zip(seq.events, lay.ys, strict=True):
        body += _draw_note(ev, y, lay) if isinstance(ev, _Note) else _draw_message(ev, y, lay)
    return frame(lay.width, lay.height, "Sequence diagram", "eos-seq-head", "auto-start-reverse", body)
