"""The course in a real browser: Debian's Chromium, driven by Playwright, against `make lab`'s JupyterLab.

Opens the index, follows its link to a lab, follows its link to notebook 01 and runs it in the
browser's kernel through the lost acknowledgement up to the trace diagram after the retry; then
checks what a learner would see: Mermaid diagrams rendered (live, as SVG), the matplotlib figure
as an image, no cell with an error. Screenshots go to test-artifacts/browser/ (path printed at the end).
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.parse
from pathlib import Path

import pytest

from eoslab._wait import wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
NB01 = ROOT / "notebooks" / "01_idempotent_producer.ipynb"
LAST_CELL = "b45145d4"  # the trace diagram after the lost ack and its retry
DIAGRAM_CELLS = ("b495d655", "b45145d4")  # the first trace diagram, and that one
FIGURE_CELL = "5b2f9c44"  # trace.plot()
RUN_TIMEOUT = 300.0  # the cells above take ~30-60 s (a 3 s socket timeout, JVM tools); 5 min means stuck


def _cell_ids(path: Path) -> list[str]:
    return [c["id"] for c in json.loads(path.read_text())["cells"]]


def _digest(paths: list[Path]) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def test_index_lab_and_notebook_01_in_chromium(lab, chromium, artifacts):
    from playwright.sync_api import sync_playwright

    ids = _cell_ids(NB01)
    last = ids.index(LAST_CELL)
    course_files = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((ROOT / "labs").glob("*.ipynb"))
    before = _digest(course_files)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**chromium)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(90_000)  # a cold JupyterLab bundle on 2 busy cores
            page.goto(f"{lab.url}/lab/tree/notebooks/index.ipynb?token={lab.token}")

            # 1. The index, as `make lab` opens it.
            index = page.locator(".jp-NotebookPanel", has=page.locator("h1", has_text="eoslab: exactly-once"))
            to_lab01 = index.locator("a[href*='/files/labs/lab01_idempotence.ipynb']")  # JupyterLab resolves hrefs
            to_lab01.wait_for()
            page.screenshot(path=artifacts / "1-index.png")
            # Every course link the browser resolved answers (served from the repository root).
            hrefs = [a.get_attribute("href") or "" for a in index.locator("a[href*='/files/']").all()]
            assert len(hrefs) >= 7, hrefs
            for href in hrefs:
                assert page.request.get(href).status == 200, href

            # 2. Its link to lab 01 opens the lab (labs/ is served: the finding of issue 16).
            to_lab01.click()
            lab01 = page.locator(".jp-NotebookPanel:visible", has=page.locator("h1", has_text="Lab 01"))
            lab01.wait_for()
            n_lab = len(_cell_ids(ROOT / "labs" / "lab01_idempotence.ipynb"))
            wait_until(  # the whole lab on screen, its TODO and check cells too, before the screenshot
                lambda: lab01.locator(".jp-Notebook .jp-Cell").count() == n_lab,
                timeout=60,
                what=f"all {n_lab} cells of lab 01 in the page",
            )
            assert page.locator(".lm-TabBar-tab.lm-mod-current", has_text="lab01_idempotence.ipynb").count() == 1
            page.screenshot(path=artifacts / "2-lab01.png")

            # 3. Back to the index, follow the link to notebook 01, run it up to the diagram after the retry.
            page.locator(".lm-TabBar-tab", has_text="index.ipynb").click()
            index.locator("a[href*='/files/notebooks/01_idempotent_producer.ipynb']").click()
            nb = page.locator(".jp-NotebookPanel:visible", has=page.locator("h1", has_text="01 · The idempotent"))
            nb.wait_for()
            wait_until(
                lambda: (
                    nb.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").count() > 0
                    or page.locator(".jp-mod-current .jp-Toolbar-kernelStatus, [data-status='idle']").count() > 0
                ),
                timeout=90,
                what="the kernel of notebook 01 to start (idle)",
            )
            cells = nb.locator(".jp-Notebook .jp-Cell")
            wait_until(  # JupyterLab attaches the cells of a long notebook progressively
                lambda: cells.count() == len(ids), timeout=60, what=f"all {len(ids)} cells of notebook 01 in the page"
            )
            # Select the cell after the diagram, then Run > Run All Above Selected Cell: what a learner clicks.
            cells.nth(last + 1).click(position={"x": 5, "y": 5})
            assert "jp-mod-active" in (cells.nth(last + 1).get_attribute("class") or "")
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Above Selected Cell").click()
            t0 = time.monotonic()
            code = [i for i in range(last + 1) if "jp-CodeCell" in (cells.nth(i).get_attribute("class") or "")]

            def prompts_done() -> bool:
                texts = [cells.nth(i).locator(".jp-InputArea-prompt").text_content() or "" for i in code]
                return all(t.strip().startswith("[") and "*" not in t and t.strip() != "[ ]:" for t in texts)

            wait_until(
                prompts_done,
                timeout=RUN_TIMEOUT,
                interval=1.0,
                what=f"cells 0..{last} of notebook 01 to finish in the browser's kernel",
                describe=lambda: (
                    "prompts: "
                    + ", ".join(cells.nth(i).locator(".jp-InputArea-prompt").text_content() or "" for i in code)
                ),
            )
            ran_s = time.monotonic() - t0
            print(f"notebook 01, {len(code)} code cells run in the browser: {ran_s:.0f} s")

            # No cell shows an error (JupyterLab renders tracebacks and stderr as this MIME type).
            errors = nb.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            texts = [errors.nth(i).inner_text()[:500] for i in range(errors.count())]
            assert texts == [], f"cells show errors or stderr: {texts}"

            # Mermaid: rendered live by JupyterLab's Mermaid (an SVG made in the browser by mermaid.js, shown
            # as an <img>), with the trace's messages in it -- not the kit's static copy, not a parse error.
            for cid in DIAGRAM_CELLS:
                cell = cells.nth(ids.index(cid))
                cell.scroll_into_view_if_needed()
                out = cell.locator(".jp-OutputArea-output.jp-RenderedMermaid")
                img = out.locator("figure[data-jp-mermaid-version] img")
                img.wait_for()
                assert out.locator(".jp-mod-warning").count() == 0, out.inner_text()
                svg = urllib.parse.unquote(img.get_attribute("src") or "")
                assert svg.startswith("data:image/svg+xml,"), svg[:80]
                assert 'aria-roledescription="sequence"' in svg  # mermaid.js drew a sequence diagram
                assert "InitProducerId" in svg
                assert img.evaluate("el => el.naturalWidth") > 100
                assert cell.locator(".jp-RenderedSVG").count() == 0  # the live diagram, not the static copy
            second = cells.nth(ids.index(LAST_CELL))
            svg = urllib.parse.unquote(second.locator(".jp-RenderedMermaid img").get_attribute("src") or "")
            assert svg.count("Produce v") >= 2 and "response dropped" in svg  # the lost answer and the retry
            second.locator(".jp-RenderedMermaid").screenshot(path=artifacts / "4-notebook01-trace-diagram.png")

            # matplotlib: the trace timeline, as an image that actually has pixels.
            img = cells.nth(ids.index(FIGURE_CELL)).locator(".jp-RenderedImage img")
            img.wait_for()
            width = img.evaluate("el => el.naturalWidth")
            assert width > 200, f"the figure is {width} px wide"
            img.scroll_into_view_if_needed()
            page.screenshot(path=artifacts / "3-notebook01.png")
        finally:
            browser.close()
    assert _digest(course_files) == before, "the browser run changed a committed notebook (autosave?)"
