"""Every link a learner clicks in the index and the README's course table opens, under `make lab`'s root."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eoslab.course import INDEX, lab_argv

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _served_root() -> Path:
    argv = lab_argv(ROOT, "--no-browser")
    roots = [a.split("=", 1)[1] for a in argv if a.startswith("--ServerApp.root_dir=")]
    assert len(roots) == 1, argv
    assert argv[-1] == str(ROOT / INDEX)  # the file JupyterLab opens first
    return Path(roots[0])


def _index_links() -> list[tuple[str, Path]]:
    nb = json.loads((ROOT / INDEX).read_text())
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    # A link's #fragment names a place in the file (test_course_shape checks the glossary's); the file must exist.
    return [
        (t, (ROOT / INDEX).parent / t.partition("#")[0]) for t in LINK.findall(text) if not t.startswith(("http", "#"))
    ]


def _readme_course_links() -> list[tuple[str, Path]]:
    text = (ROOT / "README.md").read_text()
    course = text.split("## The course", 1)[1].split("\n## ", 1)[0]
    return [(t, ROOT / t) for t in LINK.findall(course) if not t.startswith(("http", "#"))]


def test_make_lab_serves_the_repository_root_not_notebooks() -> None:
    """The finding of issue 16: `jupyter lab notebooks/index.ipynb` served notebooks/ alone."""
    assert _served_root() == ROOT.resolve()


@pytest.mark.parametrize("source", ["index", "readme"])
def test_every_course_link_resolves_to_a_file_inside_the_served_root(source: str) -> None:
    links = _index_links() if source == "index" else _readme_course_links()
    assert links, f"no links found in the {source}"
    root = _served_root()
    for target, path in links:
        resolved = path.resolve()
        assert resolved.is_file(), f"{source}: {target} does not exist"
        assert resolved.is_relative_to(root), f"{source}: {target} is outside what JupyterLab serves ({root})"


def test_the_index_and_the_readme_link_every_written_notebook_and_every_lab() -> None:
    course = {p.resolve() for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")}
    course |= {p.resolve() for p in (ROOT / "labs").glob("lab*.ipynb")}
    for source, links in (("index", _index_links()), ("readme", _readme_course_links())):
        linked = {p.resolve() for _, p in links}
        assert course <= linked, f"{source} does not link {sorted(p.name for p in course - linked)}"
