"""Showing things in a notebook: Mermaid diagrams as JupyterLab renders them."""

from __future__ import annotations

from typing import Any


def show_mermaid(diagram: str) -> Any:
    """Display a Mermaid diagram (JupyterLab ≥ 4.1 renders ```mermaid in Markdown output).

    Outside Jupyter (or in GitHub's preview) the fenced source is still readable text.
    """
    from IPython.display import Markdown, display

    md = Markdown(f"```mermaid\n{diagram}\n```")
    display(md)
    return None
