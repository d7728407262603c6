"""Showing things in a notebook: Mermaid diagrams, live in JupyterLab and as a static SVG elsewhere."""

from __future__ import annotations

from eoslab._mermaid_svg import mermaid_svg


def mermaid_bundle(diagram: str) -> dict[str, str]:
    """The output's representations, one output: each viewer shows the best one it can render.

    JupyterLab ≥ 4.1 renders ``text/vnd.mermaid`` live (its Mermaid renderer ranks 61, before
    ``image/svg+xml`` at 80); ``jupyter nbconvert --to html`` ranks the SVG first, and so does
    any viewer that does not know Mermaid's MIME type (GitHub's preview, older JupyterLab): they
    show the static copy this kit draws itself (:mod:`eoslab._mermaid_svg`), which needs no
    network. A console shows the source.
    """
    bundle = {"text/vnd.mermaid": diagram, "text/plain": diagram}
    svg = mermaid_svg(diagram)
    if svg is not None:
        bundle["image/svg+xml"] = svg
    return bundle


def show_mermaid(diagram: str) -> None:
    """Display a Mermaid diagram: live in JupyterLab ≥ 4.1, a static SVG copy in every other viewer."""
    from IPython.display import display

    display(mermaid_bundle(diagram), raw=True)
