"""What the three renderers share: how wide a text prints, labels of several lines, the SVG frame.

Every box is sized from the width of the text it holds, so the width estimate decides whether boxes
overlap or labels overflow: it adds up Helvetica's own glyph widths (Arial has the same), with a margin
for a viewer that falls back to a wider sans-serif, rather than counting characters.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from xml.sax.saxutils import escape

FONT_PX = 12
FONT = f"font-family='Helvetica, Arial, sans-serif' font-size='{FONT_PX}'"
LINE_H = 15  # one more line of a label: the box or the row grows by this much
ROW_H = 30
BOX_H = 32
PAD = 16

_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)

# Helvetica's advance widths (its AFM metrics, thousandths of an em) of printable ASCII, space to "~".
_ADVANCE = (
    (278, 278, 355, 556, 556, 889, 667, 222, 333, 333, 389, 584, 278, 333, 278, 278)  # space to /
    + (556,) * 10  # 0-9
    + (278, 278, 584, 584, 584, 556, 1015)  # : ; < = > ? @
    + (667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833)  # A-M
    + (722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611)  # N-Z
    + (278, 278, 278, 469, 556, 222)  # [ \ ] ^ _ `
    + (556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833)  # a-m
    + (556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500)  # n-z
    + (334, 260, 334, 584)  # { | } ~
)
_OTHER = 1000  # any other glyph (★, an accented letter, CJK): a whole em, never less than it needs
_MARGIN = 1.17  # a viewer without Helvetica or Arial falls back to a wider sans-serif: DejaVu Sans, Linux's
# usual one, prints the kit's labels 13-16 % wider (measured on its metrics), so the padding stays padding


def lines_of(label: str) -> list[str]:
    """The lines of a Mermaid label: ``<br/>``, ``<br>`` and ``<br />`` break it, as Mermaid draws it."""
    return [part.strip() for part in _BR.split(label)]


def text_w(text: str) -> float:
    """How wide ``text`` prints in pixels (one line)."""
    units = sum(_ADVANCE[ord(c) - 32] if 32 <= ord(c) < 127 else _OTHER for c in text)
    return units * FONT_PX / 1000 * _MARGIN


def lines_w(lines: Sequence[str]) -> float:
    """How wide the widest of ``lines`` prints."""
    return max((text_w(t) for t in lines), default=0.0)


def text(x: float, y: float, content: str | Sequence[str], anchor: str = "middle", extra: str = "") -> str:
    """A ``<text>`` whose first line sits on baseline ``y``; several lines are ``<tspan>``s, each
    ``LINE_H`` lower than the last (SVG has no line breaks of its own)."""
    lines = [content] if isinstance(content, str) else list(content)
    head = f"<text x='{x:.0f}' y='{y:.0f}' text-anchor='{anchor}' {FONT}{extra}>"
    if len(lines) == 1:
        return f"{head}{escape(lines[0])}</text>"
    spans = (f"<tspan x='{x:.0f}' y='{y + LINE_H * i:.0f}'>{escape(t)}</tspan>" for i, t in enumerate(lines))
    return head + "".join(spans) + "</text>"


def centred_baseline(top: float, height: float, n_lines: int) -> float:
    """The first baseline of ``n_lines`` lines centred in a box from ``top``, ``height`` high."""
    return top + height / 2 + 4 - LINE_H * (n_lines - 1) / 2


def frame(width: float, height: float, title: str, marker: str, orient: str, body: list[str]) -> str:
    """The whole picture: a white page, an arrow head called ``marker``, then ``body``."""
    return "\n".join(
        [
            f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}'>",
            f"<title>{title} (static copy of the Mermaid diagram, drawn by eoslab)</title>",
            f"<defs><marker id='{marker}' viewBox='0 0 10 10' refX='9' refY='5' markerWidth='8' markerHeight='8' "
            f"orient='{orient}'><path d='M0,0 L10,5 L0,10 z' fill='#333'/></marker></defs>",
            f"<rect width='{width:.0f}' height='{height:.0f}' fill='white'/>",
            *body,
            "</svg>",
        ]
    )
