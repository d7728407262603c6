"""The whole course in containers (issue 24): a copy of the repository started ONLY by the documented command,
``docker compose --profile lab up -d``, opened in Chromium from the lab container's JupyterLab.

No host Python talks to the cluster: this process runs ``docker compose`` and a browser, nothing else. In the
browser: the course opens (no news toast, no build or data folders listed), notebook 01 runs whole in the
container's kernel with no error output, lab 01's solution runs whole and every check prints its ✔ (full
marks: a failed check raises, which shows as an error). Then the learner's edit is saved, the lab container is
killed, the same command starts it again, and the edit is still there (the course folder is a bind mount).
The start-up times (the command to a usable JupyterLab, cold: new containers and empty volumes; warm: the
killed container started again) go to test-artifacts/browser/lab-container.json.

The copy starts on ports of its own: its ``docker-compose.yml`` is the committed file's rendering at a port offset
whose every port (the nodes', the proxy's, JupyterLab's) is free and whose compose project ``eoslab-<offset>`` has no
container or volume here (:func:`own_offset`), so a learner's course (``make lab``'s cluster and JupyterLab, or
their own lab container, at offset 0) runs beside it untouched, and its clean-up (``down -v``) deletes only its own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from eoslab._compose import compose_project, render_compose
from eoslab._compose_lab import jupyterlab_port, lab_ports
from eoslab._ports import is_free
from eoslab._wait import wait_until
from eoslab.topology import TOPOLOGY, Topology
from tests.suite_ports import LAB_STEP, compose_projects

pytestmark = [pytest.mark.docker, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
UP = ["docker", "compose", "--profile", "lab", "up", "-d"]
"""The documented command (README, "The whole course in containers")."""
NB01 = "notebooks/01_idempotent_producer.ipynb"
SOLUTION = "solutions/lab01_idempotence.ipynb"
TASKS = ("t1", "t2", "t3", "t4", "t5")  # lab 01's checks: 7 points in all (core 6, stretch 1)
MARK = "# edited in the lab container"
LIBRDKAFKA_LOG = re.compile(r"^%\d\|\d+\.\d+\|[A-Z]+\|")
RUN_TIMEOUT = 600.0  # notebook 01 on docker: 123 s under nbval at load 25-40 (docs/docker.md)


def own_offset(base: int = TOPOLOGY.port_offset) -> Topology:
    """The first offset from ``base`` + 4000, in steps of 100, whose ports are all free and whose compose project is
    not here; the test fails with one sentence when ten are taken."""
    projects = compose_projects()
    for step in range(10):
        topo = Topology(port_offset=base + LAB_STEP + 100 * step)
        ports = [*topo.all_ports(), *lab_ports(topo)]
        if compose_project(topo) not in projects and all(is_free(p) for p in ports):
            return topo
    pytest.fail(f"no free ports for the lab container's cluster from offset {base + LAB_STEP}: stop what holds them.")


URL: list[str] = []
"""JupyterLab's address on the host, for the copy's offset (set by the ``course`` fixture)."""


def _api(path: str) -> Any:
    with urllib.request.urlopen(f"{URL[0]}{path}", timeout=10) as resp:
        return json.loads(resp.read())


def _answers() -> bool:
    try:
        return bool(_api("/api/status"))
    except OSError:
        return False


@pytest.fixture
def course(tmp_path: Path, docker_image: str) -> Any:
    """A copy of the repository (what git tracks) on ports of its own, with the lab image here; ``down -v`` at the
    end. Yields the copy, the environment of its commands and its cluster's topology."""
    from eoslab import _lab_image
    from eoslab.course._workshop import _copy_tree, course_files

    image = _lab_image.build_lab_image().image  # cached: seconds unless the kit changed
    topo = own_offset()
    dest = tmp_path / "course"
    _copy_tree(ROOT, course_files(ROOT), dest)
    (dest / "docker-compose.yml").write_text(render_compose(topo, lab=True))
    URL[:] = [f"http://127.0.0.1:{jupyterlab_port(topo)}"]
    for junk in ("kafka-data", "runs", "eoslab.egg-info"):  # written beside the course by the kit and pip
        (dest / junk).mkdir(exist_ok=True)
    env = dict(os.environ, EOSLAB_KAFKA_IMAGE=docker_image, EOSLAB_LAB_IMAGE=image)
    env.pop("EOSLAB_PORT_OFFSET", None)
    try:
        yield dest, env, topo
    finally:
        down = subprocess.run(
            ["docker", "compose", "--profile", "lab", "down", "-v", "--timeout", "10"],
            cwd=dest,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        print(down.stderr[-500:])


def _start(course: Path, env: dict[str, str], page: Any, what: str) -> dict[str, float]:
    """The documented command, then JupyterLab in the browser: seconds to the API answering and to a usable page."""
    t0 = time.monotonic()
    proc = subprocess.run(UP, cwd=course, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    up = time.monotonic() - t0
    wait_until(_answers, timeout=300, interval=0.5, what=f"the lab container's JupyterLab ({what})")
    api = time.monotonic() - t0
    page.goto(f"{URL[0]}/lab/tree/notebooks/index.ipynb")
    page.locator(".jp-NotebookPanel", has=page.locator("h1", has_text="eoslab: exactly-once")).wait_for()
    return {"compose_up_s": up, "api_s": api, "usable_s": time.monotonic() - t0}


def _course_opens(page: Any, artifacts: Path) -> None:
    """No news toast over the index; the file browser lists the course, not what the kit and pip write."""
    page.wait_for_timeout(3000)  # the toast, when there is one, comes a moment after the page
    assert page.get_by_text("official Jupyter news").count() == 0
    names = {c["name"] for c in _api("/api/contents/")["content"]}
    assert {"notebooks", "labs", "README.md"} <= names
    assert not names & {"kafka-data", "runs", "eoslab.egg-info"}, names
    page.screenshot(path=artifacts / "lab-container-index.png")


def _code_cells(course: Path, rel: str) -> list[dict[str, Any]] | None:
    """The code cells of ``rel`` as saved, read from the disk (the course folder is the container's bind mount);
    None while the file is being written.

    Never through the contents API while a save may be in flight: jupyter_server's async save truncates the file
    and writes it in a thread, and a GET that reads it half-written moves it aside as ``.invalid`` and puts back
    the copy the save started from: the save is lost, silently (jupyter-server/jupyter_server#1416). Polling the
    API every 0.25 s did exactly that in run 68 and in CI's run of 28 Nov (reproduced: session 15)."""
    try:
        cells = json.loads((course / rel).read_text(encoding="utf-8"))["cells"]
    except ValueError:  # half-written: the save has not finished
        return None
    code = [c for c in cells if c["cell_type"] == "code"]
    for output in (o for c in code for o in c["outputs"]):  # on disk a text is a list of lines (nbformat)
        if isinstance(output.get("text"), list):
            output["text"] = "".join(output["text"])
    return code


def _run_all(page: Any, course: Path, rel: str, title: str, artifacts: Path) -> Any:
    """Open ``rel``, Run > Run All Cells in the container's kernel; the cells, once all finished, no errors."""
    page.goto(f"{URL[0]}/lab/tree/{rel}")
    nb = page.locator(".jp-NotebookPanel:visible", has=page.locator("h1", has_text=title))
    nb.wait_for()
    n = len(json.loads((ROOT / rel).read_text())["cells"])
    cells = nb.locator(".jp-Notebook .jp-Cell")
    wait_until(lambda: cells.count() == n, timeout=90, what=f"all {n} cells of {rel} in the page")
    wait_until(
        lambda: nb.locator("[data-status='idle']").count() > 0 or page.locator("[data-status='idle']").count() > 0,
        timeout=120,
        what=f"the kernel of {rel} (idle)",
    )
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    code = [i for i in range(n) if "jp-CodeCell" in (cells.nth(i).get_attribute("class") or "")]

    def prompts() -> list[str]:
        return [(cells.nth(i).locator(".jp-InputArea-prompt").text_content() or "").strip() for i in code]

    t0 = time.monotonic()
    wait_until(
        lambda: all(t.startswith("[") and "*" not in t and t != "[ ]:" for t in prompts()),
        timeout=RUN_TIMEOUT,
        interval=2.0,
        what=f"every code cell of {rel} to finish in the container's kernel",
        describe=lambda: "prompts: " + ", ".join(prompts()),
    )
    print(f"{rel}: {len(code)} code cells run in the lab container: {time.monotonic() - t0:.0f} s")
    page.screenshot(path=artifacts / f"lab-container-{Path(rel).stem}.png", full_page=True)
    cells_saved = _save(page, nb, course, rel, artifacts)
    outputs = [o for c in cells_saved for o in c["outputs"]]
    errors = [f"{o['ename']}: {o['evalue']}" for o in outputs if o["output_type"] == "error"]
    assert errors == [], f"{rel}: cells raised in the lab container: {errors}"
    # stderr is librdkafka's own log only (its retries and the disconnects the fault proxy makes, "%4|...")
    stderr = [ln for o in outputs if o.get("name") == "stderr" for ln in o["text"].splitlines() if ln.strip()]
    assert all(LIBRDKAFKA_LOG.match(ln) for ln in stderr), f"{rel}: stderr beyond librdkafka's log: {stderr}"
    return nb


def _dialogs(page: Any) -> str:
    """What any JupyterLab dialog on screen says (a save can wait on one, e.g. "File Changed")."""
    texts = [t.strip() for t in page.locator(".jp-Dialog").all_inner_texts() if t.strip()]
    return "dialogs: " + (" | ".join(texts) if texts else "none")


def _saved(page: Any, rel: str, press: Any) -> None:
    """Do ``press`` (a click or a key) and wait for the save it makes: JupyterLab's PUT of ``rel``, answered 200."""
    path = "/api/contents/" + urllib.parse.quote(rel)
    with page.expect_response(
        lambda r: r.request.method == "PUT" and urllib.parse.urlsplit(r.url).path == path, timeout=60_000
    ) as put:
        press()
    assert put.value.status == 200, f"saving {rel}: {put.value.status} {put.value.text()[:500]}"


def _save(page: Any, nb: Any, course: Path, rel: str, artifacts: Path) -> list[dict[str, Any]]:
    """Save ``rel`` with its panel's own Save button (not Ctrl+S: a key press goes wherever the focus is) and return
    its code cells as written, every one with its outputs. On a failure the screen is kept; the error names any
    JupyterLab dialog on screen and any ``.invalid`` file beside the notebook (a save lost to a concurrent read)."""

    def every_cell_saved() -> list[dict[str, Any]]:
        cells = _code_cells(course, rel)
        return cells if cells and all(c.get("execution_count") for c in cells) else []  # [] is "not yet"

    def describe() -> str:
        aside = sorted(p.name for p in (course / rel).parent.glob("*.invalid"))
        return f"{_dialogs(page)}; files moved aside by the server: {aside or 'none'}"

    try:
        _saved(page, rel, nb.locator(".jp-Toolbar [data-command='docmanager:save']").first.click)
        return wait_until(
            every_cell_saved, timeout=30, what=f"{rel} saved with every code cell's outputs", describe=describe
        )
    except Exception:
        page.screenshot(path=artifacts / f"lab-container-{Path(rel).stem}-save.png", full_page=True)
        raise


def _edit_and_save(page: Any, nb: Any, course: Path) -> None:
    """The learner's edit: a new cell at the end with a comment, saved with Ctrl+S after a click in the notebook."""
    nb.locator(".jp-Notebook .jp-Cell").last.click(position={"x": 5, "y": 5})
    page.keyboard.press("Escape")
    page.keyboard.press("b")  # a new code cell below, in edit mode after Enter
    page.keyboard.press("Enter")
    page.keyboard.type(MARK)
    page.keyboard.press("Escape")
    _saved(page, SOLUTION, lambda: page.keyboard.press("Control+s"))
    assert MARK in (course / SOLUTION).read_text(encoding="utf-8"), "Ctrl+S answered 200 but the edit is not on disk"


# Its own guard: minutes of work by design (notebook 01 and lab 01 run in the container): 164-196 s on the Intel
# machine of this kind, up to 0.65 of the plain 300 s, and that machine ran 1.5x slower in some hours
# (docs/reliability.md, session 17). Each of its waits is bounded on its own and says what it waited for.
@pytest.mark.timeout(600)
def test_the_course_in_the_lab_container(course: Any, chromium: dict[str, object], artifacts: Path) -> None:
    from playwright.sync_api import sync_playwright

    dest, env, topo = course
    print(f"the lab container's cluster at port offset {topo.port_offset}, JupyterLab on {URL[0]}")
    timings: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**chromium)  # type: ignore[arg-type]
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            timings["cold"] = _start(dest, env, page, "cold: new containers, empty volumes")
            _course_opens(page, artifacts)
            _run_all(page, dest, NB01, "01", artifacts)
            sol = _run_all(page, dest, SOLUTION, "Lab 01", artifacts)
            cells = _code_cells(dest, SOLUTION) or []
            text = "".join(o["text"] for c in cells for o in c["outputs"] if o.get("name") == "stdout")
            assert all(f"✔ {t}:" in text for t in TASKS), text[-3000:]  # every check passed: 7 / 7 points
            _edit_and_save(page, sol, dest)
            kill = subprocess.run(
                ["docker", "kill", f"{compose_project(topo)}-lab"], capture_output=True, text=True, timeout=60
            )
            assert kill.returncode == 0, kill.stderr
            timings["warm"] = _start(dest, env, page, "warm: the killed lab container started again")
            saved = json.dumps(_api(f"/api/contents/{SOLUTION}?content=1")["content"])
            assert MARK in saved, "the learner's edit is gone after the lab container was killed and restarted"
        finally:
            browser.close()
    (artifacts / "lab-container.json").write_text(json.dumps(timings, indent=2) + "\n")
    print(f"lab container start-up (the command to a usable JupyterLab): {json.dumps(timings)}")
