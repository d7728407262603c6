"""Sphinx's configuration of the course website (`make site`; tools/site_build.py prepares the sources).

Sphinx with myst-nb and sphinx-book-theme, all from PyPI: the theme's CSS, JavaScript and fonts come inside its
wheel, so the build and the pages need no network (mystmd's site themes are downloaded from its API at build
time). myst-nb renders the outputs stored in the executed notebooks and never runs a kernel here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

project = "eoslab: exactly-once semantics in Apache Kafka"
author = "the eoslab course"
copyright = "the eoslab course authors"
root_doc = "notebooks/index"

extensions = ["myst_nb", "eoslab_site"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# The pages show the outputs of the run the notebooks were executed in; nothing is executed here.
nb_execution_mode = "off"
nb_ipywidgets_js: dict[str, dict[str, str]] = {}  # no widgets in the course: load no widget JavaScript (a CDN)
nb_merge_streams = True

myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 6
# The anchors links in the course use are JupyterLab's (the heading's text, spaces made '-', case kept): the same
# links resolve on the site (eoslab_site.jupyterlab_slug).
from eoslab_site import jupyterlab_slug  # noqa: E402

myst_heading_slug_func = jupyterlab_slug
# The slug function above is a function: Sphinx cannot pickle it and says so. A module's heading levels are the
# notebook's (an H4 under an H2 is how JupyterLab shows it too).
# A shell line continued with a backslash (`!{sys.executable} ../examples/eos_loop.py ... \`, valid in IPython) is
# more than IPython's Pygments lexer reads: Sphinx shows that cell with the highlighting it could do, and says so.
suppress_warnings = ["config.cache", "myst.header", "misc.highlighting_failure"]

html_theme = "sphinx_book_theme"
html_title = "eoslab — exactly-once in Kafka"
html_static_path = ["static"]
html_css_files = ["eoslab.css"]
html_copy_source = False
html_show_sourcelink = False
html_theme_options = {
    "use_download_button": False,
    "use_fullscreen_button": False,
    "use_repository_button": False,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
html_last_updated_fmt = ""
html_context = {"eoslab_run": os.environ.get("EOSLAB_SITE_RUN", "")}
