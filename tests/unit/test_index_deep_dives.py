"""The course map's list of deep dives (notebooks/index.ipynb, after "The deep dives:") names every deep dive of every
module notebook, in order, as the notebooks' own headings name them: the list a learner short of time skips by."""

from __future__ import annotations

import json
import re
from pathlib import Path

from eoslab.course._reading import read_notebook, split

ROOT = Path(__file__).resolve().parents[2]


def _index_list() -> dict[str, list[str]]:
    nb = json.loads((ROOT / "notebooks" / "index.ipynb").read_text())
    text = next(s for c in nb["cells"] if "The deep dives:" in (s := "".join(c["source"])))
    listed = text.split("The deep dives:", 1)[1].split("\n\n", 2)[1]
    rows = dict(re.findall(r"^- (\d\d): (.+)$", listed, flags=re.M))
    return {module: titles.split("; ") for module, titles in rows.items()}


def _notebooks() -> dict[str, list[str]]:
    found = {}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        _, dives = split(read_notebook(path), path.name)
        if dives:
            found[path.name[:2]] = [d.title.removeprefix("Deep dive — ") for d in dives]
    return found


def test_the_course_map_lists_every_deep_dive_of_every_module() -> None:
    assert _index_list() == _notebooks()
