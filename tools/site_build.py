"""`make site`: the course as a website, from notebooks executed on the cluster.

    python -m tools.site_build [--executed DIR] [--out DIR] [--execute | --check]

The pages are the modules as a run on a real cluster left them: the executed copies that nbval's course run keeps
(tests/executed_plugin.py, ``$EOSLAB_EXECUTED_DIR``; default ``site-executed/``). An executed copy must hold the
very cells of the committed notebook (same ids, same sources) and no error output; with ``--execute`` the
notebooks without such a copy are executed first, on the running cluster (nbval with that plugin), else the
build stops and says which. Then, for each page:

- a note under its title says which run it shows: the date, Kafka, the clients, the machine, the backend;
- each deep dive (``### Deep dive — …`` to ``*End of deep dive.*``) folds into a ``<details>``, its inner headings
  kept as anchors (tools/site/eoslab_site.py), so links into it still land;
- outputs lose what would name this machine's paths, user or host (:func:`scrub`);
- the labs come from ``labs/`` (generated from the solutions, no solution in them), without outputs.

Sphinx (tools/site/conf.py) writes the HTML into ``--out`` (default ``build/site``); the build's time and the
site's size are printed (docs/site.md records them).
"""

from __future__ import annotations

import argparse
import getpass
import html
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "tools" / "site"
EXECUTED_ENV = "EOSLAB_EXECUTED_DIR"
SITE_PYTHON = ROOT / ".venv-site" / "bin" / "python"
"""Sphinx's environment (`make site` makes it from tools/site/requirements.txt), apart from the course's .venv."""
DEEP = re.compile(r"^### (Deep dive — .+)$")
END_DEEP = "*End of deep dive.*"
HEADING = re.compile(r"^(#{1,6}) (.+)$", re.MULTILINE)
SOLUTION_MARKS = ("### BEGIN SOLUTION", "### END SOLUTION")


def _text(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _inline_html(text: str) -> str:
    """A heading's Markdown as HTML inline text: code spans and bold kept, links reduced to their text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
        else:
            out.append(re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", html.escape(part)))
    return "".join(out)


def _anchor(text: str) -> str:
    """JupyterLab's anchor of a heading (tools/site/eoslab_site.py's ``jupyterlab_slug`` of its text content)."""
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text).replace("`", "").replace("**", "")
    return plain.replace(" ", "-")


def _folded_heading(match: re.Match[str]) -> str:
    level, text = len(match.group(1)), match.group(2)
    return (
        f'<p class="eoslab-folded-h{level}"><a id="{html.escape(_anchor(text))}" class="eoslab-anchor"></a>'
        f"<strong>{_inline_html(text)}</strong></p>"
    )


def fold_deep_dives(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each deep dive's cells, from its heading to its end line, inside one ``<details>`` (closed): its heading
    the ``<summary>``, the headings inside it plain paragraphs with their anchors (a heading would open a
    section the fold could not close)."""
    out, inside = [], False
    for cell in cells:
        cell = dict(cell)
        text = _text(cell)
        if cell.get("cell_type") == "markdown":
            first, _, rest = text.partition("\n")
            if m := DEEP.match(first):
                inside = True
                summary = (
                    f'<details class="eoslab-deep-dive"><summary><a id="{html.escape(_anchor(m.group(1)))}" '
                    f'class="eoslab-anchor"></a>{_inline_html(m.group(1))}</summary>'
                )
                text = summary + "\n\n" + HEADING.sub(_folded_heading, rest)
            elif text.strip() == END_DEEP and inside:
                inside = False
                text = text + "\n\n</details>"
            elif inside:
                text = HEADING.sub(_folded_heading, text)
            cell["source"] = text
        out.append(cell)
    return out


def scrub(text: str, names: list[tuple[str, str]]) -> str:
    """``text`` without this machine's own names (``names``: value -> what is shown instead, longest first; the
    user's name only inside a path or before an ``@``) and without any token."""
    for value, shown in sorted(names, key=lambda n: -len(n[0])):
        if shown == "<user>":
            text = re.sub(rf"(?<=/){re.escape(value)}(?=/)|{re.escape(value)}(?=@)", shown, text)
        elif len(value) > 3:
            text = text.replace(value, shown)
    return re.sub(r"(token=)[0-9a-zA-Z_-]{8,}", r"\1<token>", text)


def machine_names() -> list[tuple[str, str]]:
    """What :func:`scrub` removes: the course folder, home, user name, host name (not a generic one)."""
    names = [(str(ROOT), "<course>"), (str(Path.home()), "~"), (getpass.getuser(), "<user>")]
    host = socket.gethostname()
    if host and host != "localhost":
        names.append((host, "<host>"))
    return names


def _scrub_output(output: dict[str, Any], names: list[tuple[str, str]]) -> dict[str, Any]:
    escaped = [(json.dumps(v)[1:-1], shown) for v, shown in names]
    return dict(json.loads(scrub(json.dumps(output), escaped)))


def run_note(facts: dict[str, Any]) -> str:
    """The note under a page's title: the run it shows."""
    clients = f"confluent-kafka {facts['confluent_kafka']} (librdkafka {facts['librdkafka']})"
    if facts.get("pyspark"):
        clients += f", PySpark {facts['pyspark']}"
    return (
        ":::{note}\n:class: eoslab-run\n"
        f"**The run on this page:** {facts['date']} · Apache Kafka {facts['kafka']} · {clients} · "
        f"eoslab {facts['eoslab']} · {facts['machine']} · backend: {facts['backend']}. "
        "Your own run will differ in its ids, offsets and timings: run the notebook in your copy (`make lab`).\n:::"
    )


NO_CODE_NOTE = (
    ":::{admonition} No run on this page\n:class: note eoslab-run\nThis page has no code to run: it is the course's "
    "text as committed.\n:::"
)

LAB_NOTE = (
    ":::{admonition} A lab, to do in your copy of the course\n:class: tip eoslab-lab\n"
    "Run it with `make lab`: its graded cells check what your code did on your cluster (`eoslab grade` scores "
    "it). It is shown here as handed out: no outputs, no solutions.\n:::"
)


def _markdown(text: str, cell_id: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cell_id, "metadata": {}, "source": text}


def _same_cells(executed: dict[str, Any], committed: dict[str, Any]) -> bool:
    def cells(nb: dict[str, Any]) -> list[tuple[Any, str, str]]:
        return [(c.get("id"), c.get("cell_type", ""), _text(c)) for c in nb.get("cells", [])]

    return cells(executed) == cells(committed)


def _errors(nb: dict[str, Any]) -> list[str]:
    """The cells of an executed copy that did not pass (tests/executed_plugin.py notes them) or show an error."""
    failed = [str(c) for c in nb.get("metadata", {}).get("eoslab_run", {}).get("cells_not_passed", [])]
    shown = [
        str(c.get("id"))
        for c in nb.get("cells", [])
        if any(o.get("output_type") == "error" for o in c.get("outputs", []))
    ]
    return failed + [c for c in shown if not any(f.startswith(c) for f in failed)]


def _has_code(nb: dict[str, Any]) -> bool:
    return any(c.get("cell_type") == "code" for c in nb.get("cells", []))


def check_executed(executed: Path) -> tuple[list[Path], list[str]]:
    """The notebooks with no usable executed copy under ``executed`` (missing, or of other cells), and the
    executed copies that hold an error (which no page may show)."""
    todo, broken = [], []
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        if not _has_code(json.loads(nb.read_text())):
            continue  # nothing to run (the glossary): the page is the notebook itself
        copy = executed / "notebooks" / nb.name
        if not copy.is_file() or not _same_cells(json.loads(copy.read_text()), json.loads(nb.read_text())):
            todo.append(nb)
            continue
        if cells := _errors(json.loads(copy.read_text())):
            broken.append(f"{nb.name} (cells {', '.join(cells)})")
    return todo, broken


def execute(notebooks: list[Path], executed: Path) -> int:
    """Run ``notebooks`` under nbval on the running cluster, their executed copies kept in ``executed``."""
    argv = [sys.executable, "-m", "pytest", *map(str, notebooks), "--nbval-lax", "--nbval-current-env"]
    argv += ["--nbval-cell-timeout=120", "-p", "no:cacheprovider", "-p", "tests.executed_plugin", "-q", "-n", "0"]
    print(f"executing {len(notebooks)} notebooks on the cluster (nbval): {' '.join(p.name for p in notebooks)}")
    return subprocess.run(argv, cwd=ROOT, env={**os.environ, EXECUTED_ENV: str(executed)}).returncode


def _shown(output: dict[str, Any], secrets: list[tuple[str, str]]) -> dict[str, Any]:
    """An output as the site shows it: scrubbed, a Mermaid diagram by its static SVG twin only (a page loads no
    mermaid.js)."""
    out = _scrub_output(output, secrets)
    data = out.get("data")
    if isinstance(data, dict) and "image/svg+xml" in data:
        data.pop("text/vnd.mermaid", None)
    return out


def cell_anchors(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Before each cell, the anchor JupyterLab's cell links use (``notebook.ipynb#cell-id=<id>``)."""
    out = []
    for cell in cells:
        if cell.get("id"):
            anchor = f'<a id="cell-id={html.escape(str(cell["id"]))}" class="eoslab-anchor"></a>'
            out.append(_markdown(anchor, f"eoslab-anchor-{cell['id']}"))
        out.append(cell)
    return out


def _page(nb: dict[str, Any], note: str, secrets: list[tuple[str, str]], *, keep_outputs: bool) -> dict[str, Any]:
    cells = fold_deep_dives(nb["cells"])
    for cell in cells:
        if cell.get("cell_type") == "code":
            cell["outputs"] = [_shown(o, secrets) for o in cell.get("outputs", [])] if keep_outputs else []
            if not keep_outputs:
                cell["execution_count"] = None
    cells = cell_anchors(cells)
    cells.insert(2, _markdown(note, "eoslab-run-note"))  # under the title (its anchor, then its cell)
    # Cells run shell lines (`!{sys.executable} ../examples/eos_loop.py ...`): IPython's lexer reads them.
    metadata = {**nb.get("metadata", {}), "language_info": {"name": "python", "pygments_lexer": "ipython3"}}
    return {**nb, "metadata": metadata, "cells": cells}


def _toctree(modules: list[Path], labs: list[Path]) -> dict[str, Any]:
    entries = [p.stem for p in modules if p.stem != "index"] + [f"/labs/{p.stem}" for p in labs]
    return _markdown("```{toctree}\n:hidden:\n\n" + "\n".join(entries) + "\n```", "eoslab-site-toctree")


PROGRAM_SUFFIXES = (".py", ".java")


def example_programs() -> list[str]:
    """The take-home programs under examples/, as paths relative to it (``eos_loop.py``, ``java/EosLoop.java``)."""
    found = (p for p in (ROOT / "examples").rglob("*") if p.is_file() and p.suffix in PROGRAM_SUFFIXES)
    return sorted(p.relative_to(ROOT / "examples").as_posix() for p in found)


def prepare(executed: Path, src: Path) -> dict[str, Any]:
    """The Sphinx sources in ``src``: every module from its executed copy, every lab as handed out."""
    shutil.rmtree(src, ignore_errors=True)
    (src / "notebooks").mkdir(parents=True)
    (src / "labs").mkdir()
    # The programs the notebooks show and link to (../examples/eos_loop.py): on the site, files to download.
    for program in example_programs():
        (src / "examples" / program).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / "examples" / program, src / "examples" / program)
    secrets = machine_names()
    modules = sorted((ROOT / "notebooks").glob("*.ipynb"))
    labs = sorted((ROOT / "labs").glob("lab*.ipynb"))
    facts: dict[str, Any] = {}
    for path in modules:
        nb = json.loads(path.read_text())
        if _has_code(nb):
            nb = json.loads((executed / "notebooks" / path.name).read_text())
            facts = nb["metadata"]["eoslab_run"]
            note = run_note(facts)
        else:
            note = NO_CODE_NOTE
        page = _page(nb, note, secrets, keep_outputs=True)
        if path.stem == "index":
            page["cells"].append(_toctree(modules, labs))
        (src / "notebooks" / path.name).write_text(json.dumps(page, indent=1, ensure_ascii=False))
    for path in labs:
        nb = json.loads(path.read_text())
        if any(mark in _text(c) for c in nb["cells"] for mark in SOLUTION_MARKS):
            raise SystemExit(f"{path} holds a solution region: regenerate the labs (`eoslab labs`).")
        page = _page(nb, LAB_NOTE, secrets, keep_outputs=False)
        (src / "labs" / path.name).write_text(json.dumps(page, indent=1, ensure_ascii=False))
    return facts


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def _ready(executed: Path, *, run_execute: bool) -> int:
    """0 when every module has a usable executed copy (executing the others first with ``run_execute``);
    2 when some have none, 1 when one holds an error or failed to execute: each said in one sentence."""
    todo, broken = check_executed(executed)
    if (todo or broken) and run_execute:
        again = todo + [ROOT / "notebooks" / b.split(" ", 1)[0] for b in broken]
        if execute(again, executed) != 0:
            print("site: a notebook failed while executing: no site is built from a failed run.", file=sys.stderr)
            return 1
        todo, broken = check_executed(executed)
    if todo:
        names = ", ".join(p.name for p in todo)
        print(
            f"site: no executed copy of {names} in {executed} (or one of other cells): `make site` executes them on "
            "the cluster, or run the course tier with EOSLAB_EXECUTED_DIR.",
            file=sys.stderr,
        )
        return 2
    if broken:
        print(f"site: executed copies with an error output: {'; '.join(broken)}: execute them again.", file=sys.stderr)
        return 1
    return 0


def build(executed: Path, out: Path, *, run_execute: bool = False) -> int:
    """Prepare, build with Sphinx, say how long it took and how big the site is; 0 when built."""
    if (rc := _ready(executed, run_execute=run_execute)) != 0:
        return rc
    t0 = time.monotonic()
    src = out.parent / (out.name + "-src")
    facts = prepare(executed, src)
    shutil.rmtree(out, ignore_errors=True)
    python = str(SITE_PYTHON) if SITE_PYTHON.is_file() else sys.executable
    argv = [python, "-m", "sphinx", "-b", "html", "-c", str(CONF), "-q", "-W", "--keep-going"]
    if subprocess.run([*argv, str(src), str(out)], cwd=ROOT).returncode != 0:
        return 1
    (out / "run.json").write_text(json.dumps(facts, indent=1) + "\n")
    (out / ".nojekyll").write_text("")
    (out / "index.html").write_text(
        '<!doctype html><meta http-equiv="refresh" content="0; url=notebooks/index.html">'
        '<a href="notebooks/index.html">the course</a>\n'
    )
    took = time.monotonic() - t0
    pages = sum(1 for _ in out.rglob("*.html"))
    print(f"site: {out} ({_size_mb(out):.1f} MB, {pages} pages) built in {took:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.site_build", description=__doc__.split("\n\n")[0])
    default = os.environ.get(EXECUTED_ENV) or str(ROOT / "site-executed")
    parser.add_argument(
        "--executed", default=default, help=f"the executed copies (default: ${EXECUTED_ENV}, else site-executed/)"
    )
    parser.add_argument("--out", default=str(ROOT / "build" / "site"), help="where the HTML goes (default: build/site)")
    parser.add_argument("--execute", action="store_true", help="execute the notebooks without a usable copy first")
    parser.add_argument("--check", action="store_true", help="only say whether every module has a usable copy")
    args = parser.parse_args(argv)
    executed = Path(args.executed).resolve()
    if args.check:
        return _ready(executed, run_execute=False)
    return build(executed, Path(args.out).resolve(), run_execute=args.execute)


if __name__ == "__main__":
    sys.exit(main())
