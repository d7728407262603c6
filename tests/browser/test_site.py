"""The course website (`make site`) in a real browser: Debian's Chromium, driven by Playwright, over HTTP.

The site is the one `make site` built (``$EOSLAB_SITE_DIR``) from the course run's executed notebooks
(``$EOSLAB_EXECUTED_DIR``); `make site-test` runs this test on it. Every page loads without a script error; no
internal link is broken (its page exists and so does its anchor); every code cell of a module shows the outputs
its run left and none is an error, red text (stderr) or a kit object's raw repr; every image loads; module 03's
page shows its sequence diagram (the kit's static SVG: no mermaid.js); each page names its run; deep dives are
folded; the labs carry no solution; nothing names this machine's paths, user or host, and no page loads anything
from another host. Screenshots go to test-artifacts/browser/site/.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from eoslab._ports import LOOPBACK

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p.stem for p in (ROOT / "notebooks").glob("0*.ipynb"))
EXECUTED = "EOSLAB_EXECUTED_DIR"
SEQUENCE_WORDS = ("AddPartitionsToTxn", "EndTxn")  # module 03's trace: the calls of a transaction


@pytest.fixture(scope="module")
def site() -> Path:
    """The built site, ``$EOSLAB_SITE_DIR``, and the executed notebooks it was built from, ``$EOSLAB_EXECUTED_DIR``.

    Both come after the course run: nbval keeps the executed copies while the course tier runs, `make site` builds
    from them, then this test (`make site-test`). Inside the course tier itself the site does not exist yet."""
    built, executed = os.environ.get("EOSLAB_SITE_DIR"), os.environ.get(EXECUTED)
    if not built or not executed:
        pytest.skip(
            "no built site: the course run keeps its executed notebooks in $EOSLAB_EXECUTED_DIR, `make site` builds "
            "the site from them, and `make site-test` runs this test on it ($EOSLAB_SITE_DIR)"
        )
    assert (Path(built) / "notebooks" / "index.html").is_file(), f"EOSLAB_SITE_DIR={built} holds no built site"
    assert (Path(executed) / "notebooks").is_dir(), f"EOSLAB_EXECUTED_DIR={executed} holds no executed notebooks"
    return Path(built).resolve()


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The site over HTTP on a free loopback port, as any static host would serve it."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((LOOPBACK, 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _soup(path: Path) -> Any:
    from bs4 import BeautifulSoup

    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)


def _broken_links(site: Path, pages: list[Path]) -> tuple[list[str], int]:
    """Internal links whose file is missing, or whose #anchor is no id of that file; and how many had an anchor."""
    ids: dict[Path, set[str]] = {}
    broken, anchored = [], 0
    for page in pages:
        for a in _soup(page).find_all("a", href=True):
            href = str(a["href"])
            if re.match(r"^[a-z]+:", href) or href.startswith("//"):
                continue  # another site (KIPs, Kafka's docs): not the site's to keep
            path, _, frag = href.partition("#")
            target = (page.parent / urllib.parse.unquote(path)).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or site.resolve() not in target.parents:
                broken.append(f"{page.relative_to(site)}: {href} (no such page)")
                continue
            if frag:
                anchored += 1
                if target not in ids:
                    ids[target] = {str(e["id"]) for e in _soup(target).find_all(id=True)}
                if urllib.parse.unquote(frag) not in ids[target]:
                    broken.append(f"{page.relative_to(site)}: {href} (no such anchor)")
    return broken, anchored


def test_every_internal_link_lands_on_a_page_and_its_anchor(site: Path) -> None:
    pages = _pages(site)
    assert {f"notebooks/{m}.html" for m in MODULES} <= {str(p.relative_to(site)) for p in pages}
    assert len([p for p in pages if p.parent.name == "labs"]) == len(list((ROOT / "labs").glob("lab*.ipynb")))
    broken, anchored = _broken_links(site, pages)
    assert broken == []
    assert anchored > 500  # the glossary's terms, the lab's links to module cells, the pages' own tables of contents


def _executed_outputs(module: str) -> list[int]:
    """How many outputs each code cell of the module's executed copy has: what its page must show."""
    nb = json.loads((Path(os.environ[EXECUTED]) / "notebooks" / f"{module}.ipynb").read_text())
    return [len(c.get("outputs", [])) for c in nb["cells"] if c["cell_type"] == "code"]


def test_every_module_cell_shows_its_output_and_none_is_an_error(site: Path) -> None:
    for module in MODULES:
        soup = _soup(site / "notebooks" / f"{module}.html")
        cells = soup.select("div.cell")
        shown = [len(c.select("div.cell_output > *")) for c in cells]  # a markdown output renders as its own blocks
        expected = _executed_outputs(module)
        assert len(cells) == len(expected), f"{module}: {len(cells)} code cells on the page, {len(expected)} ran"
        lost = [i for i, (n, want) in enumerate(zip(shown, expected, strict=True)) if bool(n) != bool(want)]
        assert lost == [], f"{module}: code cells {lost} lost their outputs (or show some they did not have)"
        assert sum(expected) > 0, f"{module}: the run left no output at all"
        assert not soup.select("div.output.traceback, div.cell_output .traceback"), f"{module}: an error output"
        note = soup.select_one(".eoslab-run")
        assert note is not None and re.search(r"\d{4}-\d\d-\d\d .*Apache Kafka \d", note.get_text()), module
        assert "backend:" in note.get_text()


RAW_REPR = re.compile(r"\b[A-Z]\w*\(\w+=[^()]*, \w+=")
"""A dataclass's repr (``Delivery(topic='demo', partition=0, ...)``): a kit object printed as Python sees it."""


LEARNERS_CLIENT_LINE = re.compile(r"^%\d\|\d+\.\d+\|[A-Z_]+\|")
"""librdkafka's own log line (``%3|1795964825.215|FAIL|rdkafka#producer-3| ...``): a client the cell's code made with
no ``logger``, the learner's program speaking as it would on their machine. The kit's clients log through Python
(``eoslab._librdkafka``), whose lines never look like this."""


def _untidy(where: str, output: dict[str, Any]) -> str | None:
    """What the kit should not leave in a cell's saved output: red text of its own, a raw repr. (A progress bar's
    frames are not kept: the run keeps what a carriage return left on its line, tests/executed_plugin.py.)"""
    if output["output_type"] == "stream":
        text = "".join(output["text"]) if isinstance(output["text"], list) else output["text"]
        if output["name"] == "stderr":
            kits = [line for line in text.splitlines() if line.strip() and not LEARNERS_CLIENT_LINE.match(line)]
            return f"{where}: red text (stderr): {kits[0][:120]}" if kits else None
        if match := RAW_REPR.search(text):
            return f"{where}: a raw repr printed: {match.group(0)}..."
    if output["output_type"] in ("execute_result", "display_data"):
        plain = output.get("data", {}).get("text/plain", "")
        plain = "".join(plain) if isinstance(plain, list) else plain
        if len(output.get("data", {})) == 1 and RAW_REPR.match(plain):
            return f"{where}: a raw repr as the cell's result: {plain[:80]}..."
    return None


def test_the_modules_outputs_show_no_red_text_and_no_raw_repr(site: Path) -> None:
    """The executed notebooks the site shows: librdkafka's log lines go to the kit's loggers (eoslab._librdkafka),
    a kit object prints as a sentence."""
    untidy = []
    for module in MODULES:
        nb = json.loads((Path(os.environ[EXECUTED]) / "notebooks" / f"{module}.ipynb").read_text())
        for cell in (c for c in nb["cells"] if c["cell_type"] == "code"):
            found = (_untidy(f"{module} {cell.get('id')}", o) for o in cell.get("outputs", []))
            untidy += [f for f in found if f]
    assert untidy == []


def test_deep_dives_fold_labs_have_no_solutions_and_nothing_names_this_machine(site: Path) -> None:
    from tools.site_build import machine_names

    folded = [d for m in MODULES for d in _soup(site / "notebooks" / f"{m}.html").select("details.eoslab-deep-dive")]
    assert len(folded) >= len(MODULES) and all(not d.has_attr("open") for d in folded)
    assert all(d.select_one("summary").get_text().startswith("Deep dive — ") for d in folded)
    for lab in sorted((site / "labs").glob("*.html")):
        text = lab.read_text(encoding="utf-8")
        assert "BEGIN SOLUTION" not in text and not _soup(lab).select("div.cell_output"), lab.name
    secrets = [value for value, shown in machine_names() if shown != "<user>" and len(value) > 3]
    for page in _pages(site):
        text = page.read_text(encoding="utf-8")
        assert not [s for s in secrets if s in text], f"{page.name} names this machine: {secrets}"
        assert not re.search(r"token=[0-9a-f]{16,}", text), page.name
        assert not re.search(r"""(src|href)=["'](https?:)?//""", text.split("<body", 1)[0]), f"{page.name}: a CDN"


def _load(page: Any, url: str, path: Path) -> list[str]:
    """Open ``url`` (the site's file ``path``); the script errors it raised. A page that only forwards (the site's
    root, a ``<meta http-equiv="refresh">``) is followed to its target, so nothing reads a page being left."""
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    response = page.goto(url, wait_until="load")
    assert response is not None and response.status == 200, url
    forward = _soup(path).select_one('meta[http-equiv="refresh"]')
    if forward is not None:
        target = str(forward["content"]).split("url=", 1)[1]
        page.wait_for_url(urllib.parse.urljoin(url, target), wait_until="load")
    return errors


def _images_loaded(page: Any) -> list[str]:
    """Every image of the page fetched and decoded (lazy ones made eager first); the sources that did not load."""
    return list(
        page.evaluate(
            """async () => {
                const imgs = [...document.images];
                imgs.forEach(i => { i.loading = 'eager'; });
                await Promise.all(imgs.map(i => i.decode().catch(() => null)));
                return imgs.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src'));
            }"""
        )
    )


def _sequence_diagram(page: Any, served: str, site: Path, artifacts: Path) -> None:
    """Module 03 shows its transaction's sequence diagram: the kit's static SVG, on screen, with the calls."""
    found = []
    for img in page.locator("img[src$='.svg']").all():
        src = img.get_attribute("src") or ""
        svg = (site / "notebooks" / urllib.parse.unquote(src)).resolve().read_text(encoding="utf-8")
        if all(w in svg for w in SEQUENCE_WORDS):
            found.append(img)
    assert found, "module 03's page shows no sequence diagram with " + ", ".join(SEQUENCE_WORDS)
    found[0].scroll_into_view_if_needed()
    assert found[0].evaluate("el => el.getBoundingClientRect().width") > 200  # drawn at a readable size
    found[0].screenshot(path=artifacts / "03-sequence-diagram.png")


def test_the_site_in_chromium(site: Path, served: str, chromium: dict[str, object], artifacts: Path) -> None:
    from playwright.sync_api import sync_playwright

    shots = artifacts / "site"
    shots.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**chromium)  # type: ignore[arg-type]
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            page.set_default_timeout(60_000)
            for path in _pages(site):
                rel = path.relative_to(site).as_posix()
                errors = _load(page, f"{served}/{rel}", path)
                assert errors == [], f"{rel}: {errors}"
                assert _images_loaded(page) == [], rel
                if rel.startswith(("notebooks/0", "labs/lab01", "notebooks/index")):
                    page.screenshot(path=shots / (rel.replace("/", "-").removesuffix(".html") + ".png"))
                if rel == "notebooks/03_transactions.html":
                    _sequence_diagram(page, served, site, shots)
        finally:
            browser.close()
