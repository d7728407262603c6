"""A static SVG of the Mermaid diagrams the kit writes, drawn here in Python, for readers without Mermaid.

JupyterLab (4.1+) renders Mermaid live; GitHub's notebook preview, ``jupyter nbconvert --to html``
and most other viewers do not, and show the diagram's source text. So :func:`eoslab.show_mermaid`
gives each diagram an ``image/svg+xml`` twin drawn by this module: the same participants, arrows
and notes, laid out simply. It reads only the subset of Mermaid the kit itself emits:

- ``sequenceDiagram`` (protocol traces): ``participant A as Name``, messages ``->>``, ``-->>``,
  ``-x``, ``--x`` (a lost message ends in a cross), ``->``, ``-->``, and ``Note over A[,B]: text``;
- ``flowchart`` (the cluster view): ``subgraph ID["title"]`` … ``end`` holding nodes ``ID["text"]``,
  one edge line ``X -- label --> Y`` and ``style ID fill:…,stroke:…``;
- ``stateDiagram-v2`` (the transaction coordinator's states): transitions ``A --> B`` with an optional
  ``: label``, ``[*]`` as the start (or, as a target, the end).

In every label, ``<br/>`` (or ``<br>``) breaks the line, as in Mermaid: the lines are drawn one under
the other and the box holding them grows to fit. Every box is sized from its text's width
(``_draw``), so participant boxes never overlap and labels stay inside them. Each renderer reads
its diagram into a small model, lays it out, then draws it (``_sequence``, ``_flowchart``, ``_state``).

Anything else returns ``None`` and the viewer keeps the source text. Pure functions, no
dependencies: the offline bundle and a fresh laptop render the same.
"""

from __future__ import annotations

from eoslab._mermaid_svg._flowchart import flowchart_svg
from eoslab._mermaid_svg._sequence import sequence_svg
from eoslab._mermaid_svg._state import state_svg

__all__ = ["flowchart_svg", "mermaid_svg", "sequence_svg", "state_svg"]


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
