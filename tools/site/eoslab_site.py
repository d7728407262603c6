"""The course website's own Sphinx extension: the course's anchors, as JupyterLab makes them, resolve on the site.

The notebooks link headings by JupyterLab's anchor (``glossary.ipynb#AddOffsetsToTxn``, a lab's link to a module's
``#Step-3-—-…``): :func:`jupyterlab_slug` makes myst's heading anchors the same strings. A heading folded into a
deep dive is no heading on the site (tools/site_build.py makes it a paragraph with that anchor as its ``id``, so
the fold's HTML stays balanced): its anchor is registered here as one of the page's, so a link to it resolves.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes

_ID = re.compile(r'<[a-z0-9]+ [^>]*id="([^"]+)"[^>]*class="eoslab-anchor"')


def jupyterlab_slug(text: str) -> str:
    """JupyterLab's ``createHeaderId``: the heading's text content, each space made ``-``."""
    return text.replace(" ", "-")


def _raw_anchors(app: Any, doctree: nodes.document) -> None:
    """Anchors of the folded headings (raw HTML) joined to the page's myst anchors."""
    slugs = app.env.metadata[app.env.docname].setdefault("myst_slugs", {})
    for raw in doctree.findall(nodes.raw):
        for anchor in _ID.findall(raw.astext()):
            slugs.setdefault(anchor, (3, anchor, anchor))


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-read", _raw_anchors)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
