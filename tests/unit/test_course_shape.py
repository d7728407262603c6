"""The course has the shape of a lesson (issue 23; STYLE 13-16): every module notebook opens with its questions,
objectives, time and prerequisites and ends with key points, check-yourself questions and links; deep dives are
marked; each lab task names the notebook step that teaches it; a glossary defines the terms; the index is a map.

Links are checked as JupyterLab follows them. A heading's anchor is its text with spaces turned into '-', but a
browser percent-encodes non-ASCII in a link's fragment (``—`` becomes ``%E2%80%94``) and JupyterLab 4 looks the
fragment up without decoding it, so an anchor with an em dash opens the notebook at its top. The labs therefore
link a step by its cell id (``#cell-id=…``, which JupyterLab 4 scrolls to), and glossary anchors are plain ASCII.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
MODULES = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("lab*.ipynb"))
GLOSSARY = NOTEBOOKS / "glossary.ipynb"
INDEX = NOTEBOOKS / "index.ipynb"

LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
TIME = re.compile(r"^\*\*Time:\*\* (teaching ~\d+ min · (?:lab ~\d+ min|no lab))$", re.MULTILINE)
DEEP = re.compile(r"^### Deep dive — .+ \(optional: nothing graded depends on it\)$")
END_DEEP = re.compile(r"^\*?End of deep dive\.\*?$")
DETAILS = re.compile(r"<details><summary>Answer</summary>\n(.*?)</details>", re.DOTALL)
# What a fragment may hold for JupyterLab to find it as written: no percent-encoding, no space or quote,
# no '%' (read as an escape) and no '=' (JupyterLab reads `kind=value`) outside a `cell-id=` fragment.
SAFE_ANCHOR = re.compile(r"[A-Za-z0-9_.:,;!?'()*+/@~-]+")
CELL_ID = re.compile(r"cell-id=([0-9A-Za-z_-]+)")
# Terms every learner meets (the brief of issue 23); each must have an entry of its own in the glossary.
REQUIRED_TERMS = (
    "idempotent producer",
    "producer id",
    "PID",
    "producer epoch",
    "epoch bump",
    "sequence number",
    "transactional.id",
    "transaction coordinator",
    "group coordinator",
    "control batch",
    "transaction marker",
    "last stable offset",
    "LSO",
    "high watermark",
    "HW",
    "in-sync replicas",
    "ISR",
    "read_committed",
    "read_uncommitted",
    "isolation.level",
    "fencing",
    "zombie",
    "TV2",
    "KIP-447",
    "KIP-890",
    "abortable error",
    "retriable error",
    "fatal error",
    "at-least-once",
    "exactly-once",
    "duplicate",
    "hanging transaction",
    "rebalance",
    "consumer group metadata",
)


# The expert detours issue 23 found on the main path: each must sit inside a deep dive (a text from the cell).
DETOURS = {
    "00": ["(KIP-590)"],
    "01": ["### Broker 1 comes back", "### Idempotence costs no bytes on disk"],
    "02": ["## Before KRaft", "## Transactional producers use their coordinator's block"],
    "03": [
        "AlterPartitionReassignments",
        "One transaction at millisecond resolution",
        "## Step 11",
        "JPype",
        "## What common descriptions get wrong",
    ],
    "04": ["Now librdkafka's own Produce, delayed"],
    "05": ["## Step 6 — KAFKA-17754"],
    "07": ["## Mistake 9"],
}

# The modules that open on their anomaly (issue 23, "the anomaly first"; 02 from issue 42): a `## Why` section after
# Setup, before the first other section, whose code produces on the learner's cluster the failure the module's
# mechanism prevents.
WHY_FIRST = ("01", "02", "03", "04", "05")


def _nb(path: Path) -> dict[str, Any]:
    nb: dict[str, Any] = json.loads(path.read_text())
    return nb


def _text(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def _markdown(path: Path) -> list[tuple[str, str]]:
    return [(c["id"], _text(c)) for c in _nb(path)["cells"] if c["cell_type"] == "markdown"]


def _number(path: Path) -> str:
    return path.name[:2]


def _headings(text: str) -> list[str]:
    """The text of each markdown heading, as JupyterLab renders it (inline code and emphasis marks gone)."""
    out = []
    for line in text.split("\n"):
        if m := re.match(r"^#{1,6} (.*)$", line):
            out.append(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1)).replace("`", "").replace("**", ""))
    return out


def _anchor(heading: str) -> str:
    return heading.replace(" ", "-")  # JupyterLab's createHeaderId: textContent, spaces -> '-'


def _section(path: Path, title: str) -> tuple[int, str]:
    """The position and text of the (only) markdown cell whose first line is `## <title>`."""
    found = [(i, t) for i, (_, t) in enumerate(_markdown(path)) if t.split("\n", 1)[0] == f"## {title}"]
    assert len(found) == 1, f"{path.name}: {len(found)} cells headed '## {title}', want one"
    return found[0]


def _bullets(text: str) -> list[str]:
    return [line for line in text.split("\n") if re.match(r"^(- |\* |\d+\. )", line)]


def _links(text: str) -> list[tuple[str, str]]:
    return LINK.findall(text)


def _glossary_anchors() -> dict[str, str]:
    """anchor -> definition, for every `### term` of the glossary."""
    out = {}
    for _, text in _markdown(GLOSSARY):
        for block in re.split(r"^(?=### )", text, flags=re.MULTILINE)[1:]:
            head, _, body = block.partition("\n")
            body = re.split(r"^#{1,2} ", body, flags=re.MULTILINE)[0]
            (term,) = _headings(head)
            assert _anchor(term) not in out, f"glossary: '{term}' is defined twice"
            out[_anchor(term)] = body.strip()
    return out


def _time_line(path: Path) -> str:
    lines = [m.group(1) for _, t in _markdown(path) for m in TIME.finditer(t)]
    assert len(lines) == 1, f"{path.name}: {len(lines)} lines '**Time:** teaching ~N min · lab ~M min', want one"
    return lines[0]


def _lab_of(path: Path) -> Path | None:
    labs = sorted((ROOT / "labs").glob(f"lab{_number(path)}_*.ipynb"))
    return labs[0] if labs else None


def test_the_module_notebooks_are_there() -> None:
    assert [_number(p) for p in MODULES] == ["00", "01", "02", "03", "04", "05", "06", "07"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_a_module_opens_with_questions_objectives_time_and_prerequisites(path: Path) -> None:
    cells = _markdown(path)
    assert cells[0][1].startswith("# "), f"{path.name}: the title comes first"
    top = cells[1][1]  # right after the title
    assert "**Questions**" in top and "**Objectives**" in top and "**Prerequisites:**" in top, (
        f"{path.name}: the cell after the title names the Questions, Objectives, Time and Prerequisites"
    )
    questions = _bullets(top.split("**Questions**")[1].split("**Objectives**")[0])
    objectives = _bullets(top.split("**Objectives**")[1].split("**Time:**")[0])
    assert 2 <= len(questions) <= 3, f"{path.name}: {len(questions)} framing questions, want 2-3"
    assert 3 <= len(objectives) <= 5, f"{path.name}: {len(objectives)} objectives, want 3-5"
    assert "after this module you can" in top.split("**Objectives**")[1].split("\n\n")[0]
    assert TIME.search(top), f"{path.name}: the Time line is in the top cell"
    assert _time_line(path)  # and it is the notebook's only one
    assert (_lab_of(path) is None) == ("no lab" in _time_line(path)), f"{path.name}: the Time line's lab part"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_a_module_ends_with_key_points_check_yourself_and_links(path: Path) -> None:
    at_key, key = _section(path, "Key points")
    at_check, check = _section(path, "Check yourself")
    at_next, after = _section(path, "Where next")
    assert at_key < at_check < at_next == len(_markdown(path)) - 1, f"{path.name}: key points, check, links — last"
    assert 3 <= len(_bullets(key)) <= 6, f"{path.name}: {len(_bullets(key))} key points, want 3-6"

    answers = DETAILS.findall(check)
    assert 3 <= len(answers) <= 5, f"{path.name}: {len(answers)} check-yourself questions, want 3-5"
    assert check.count("<details>") == check.count("</details>") == len(answers)
    for part, answer in zip(check.split("<details>")[:-1], answers, strict=True):
        assert re.search(r"\*\*\d+\. .+\?\*\*\s*$", part), f"{path.name}: each answer follows its question"
        # a blank line after </summary>: only then is the answer rendered as markdown (JupyterLab, GitHub, nbconvert)
        assert answer.startswith("\n") and len(answer.split()) >= 10, f"{path.name}: an answer says what and why"

    targets = {t for _, t in _links(after)}
    lab = _lab_of(path)
    if lab is not None:
        assert f"../labs/{lab.name}" in targets, f"{path.name}: link the module's lab"
    following = [p for p in MODULES if p > path]
    want = following[0].name if following else "index.ipynb"
    assert want in targets, f"{path.name}: link {want} at the end"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_a_module_links_its_terms_to_the_glossary(path: Path) -> None:
    anchors = _glossary_anchors()
    cells = _markdown(path)
    top, (_, key) = cells[1][1], _section(path, "Key points")
    for where, text in (("objectives", top), ("key points", key)):
        assert any(t.startswith("glossary.ipynb#") for _, t in _links(text)), f"{path.name}: link terms in its {where}"
    for cell_id, text in cells:
        for _, target in _links(text):
            if target.startswith("glossary.ipynb"):
                frag = target.partition("#")[2]  # none: the glossary as a whole
                assert frag in ("", *anchors), f"{path.name} cell {cell_id}: {target} names no glossary term"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_every_deep_dive_is_marked_and_closed(path: Path) -> None:
    open_at = None
    for cell_id, text in _markdown(path):
        first = text.split("\n", 1)[0]
        if first.startswith("### Deep dive"):
            assert DEEP.match(first), f"{path.name} cell {cell_id}: '### Deep dive — <topic> (optional: ...)'"
            assert open_at is None, f"{path.name}: deep dive {open_at} has no end line before {cell_id}"
            open_at = cell_id
        elif END_DEEP.match(text.strip()):
            assert open_at is not None, f"{path.name} cell {cell_id}: an end line without its deep dive"
            open_at = None
        elif first.startswith("## Key points") or first.startswith("## Check yourself"):
            assert open_at is None, f"{path.name}: deep dive {open_at} still open at the key points"
    assert open_at is None, f"{path.name}: deep dive {open_at} has no 'End of deep dive.'"


def _in_deep_dives(path: Path) -> set[str]:
    """The ids of the cells between a deep dive's heading and its end line."""
    inside, deep = set(), False
    for cell in _nb(path)["cells"]:
        text = _text(cell)
        if cell["cell_type"] == "markdown" and DEEP.match(text.split("\n", 1)[0]):
            deep = True
        elif cell["cell_type"] == "markdown" and END_DEEP.match(text.strip()):
            deep = False
        elif deep:
            inside.add(cell["id"])
    return inside


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_the_expert_detours_are_deep_dives(path: Path) -> None:
    inside = _in_deep_dives(path)
    for marker in DETOURS.get(_number(path), []):
        found = [c for c, t in _markdown(path) if marker in t and not DEEP.match(t.split("\n", 1)[0])]
        assert found, f"{path.name}: no cell says {marker!r} any more: update DETOURS"
        assert set(found) <= inside, f"{path.name}: {marker!r} is on the main path: mark it as a deep dive"


def _why_problem(cells: list[dict[str, Any]]) -> str | None:
    """Why these cells do not open on the anomaly — a `## Why` section between `# Setup` and the first other `##`
    section after it (a `## Step`, or module 02's first mechanism), holding at least one code cell — or None when
    they do. A heading counts on any line of a markdown cell."""

    def first(pattern: str, after: int = -1) -> int | None:
        return next(
            (
                i
                for i, c in enumerate(cells)
                if i > after and c["cell_type"] == "markdown" and re.search(pattern, _text(c), re.MULTILINE)
            ),
            None,
        )

    setup, why = first(r"^# Setup\b"), first(r"^## Why\b")
    step = None if setup is None else first(r"^## (?!Why\b)", after=setup)
    if setup is None or step is None:
        return "no '# Setup' cell or no '##' section after it"
    if why is None:
        return "no '## Why' section"
    if not setup < why < step:
        return f"the '## Why' section (cell {why}) is not between Setup (cell {setup}) and the first step (cell {step})"
    end = first(r"^#{1,2} ", after=why)
    inside = cells[why + 1 : end]
    if not any(c["cell_type"] == "code" and _text(c).strip() for c in inside):
        return "the '## Why' section has no code cell: it must produce the anomaly on the learner's cluster"
    return None


@pytest.mark.parametrize("path", [p for p in MODULES if _number(p) in WHY_FIRST], ids=lambda p: p.name)
def test_a_module_opens_on_its_anomaly_before_the_first_step(path: Path) -> None:
    assert _why_problem(_nb(path)["cells"]) is None, f"{path.name}: {_why_problem(_nb(path)['cells'])}"


def test_the_why_check_fails_on_a_notebook_without_its_anomaly_first() -> None:
    cells = _nb(NOTEBOOKS / "01_idempotent_producer.ipynb")["cells"]
    assert _why_problem(cells) is None
    at = next(i for i, c in enumerate(cells) if _text(c).startswith("## Why"))
    step1 = next(i for i, c in enumerate(cells) if _text(c).startswith("## Step 1"))
    section = cells[at:step1]
    assert _why_problem(cells[:at] + cells[step1:]) == "no '## Why' section"
    no_code = [c for c in cells if c not in section or c["cell_type"] == "markdown"]
    assert "has no code cell" in (_why_problem(no_code) or "")
    empty_code = [c if c not in section or c["cell_type"] == "markdown" else {**c, "source": [" \n"]} for c in cells]
    assert "has no code cell" in (_why_problem(empty_code) or "")
    after_step = cells[:at] + cells[step1 : step1 + 2] + section + cells[step1 + 2 :]
    assert "is not between Setup" in (_why_problem(after_step) or "")


def _resolve(source: Path, text: str, target: str) -> str | None:
    """Why the link `[text](target)` of a lab does not lead to the notebook step it names, or None."""
    path, _, frag = target.partition("#")
    nb = (source.parent / path).resolve()
    if not nb.is_file() or nb.parent != NOTEBOOKS.resolve():
        return f"{target}: no such notebook"
    m = re.match(r"notebook (\d\d), (.+)$", text)
    if not m or m.group(1) != _number(nb):
        return f"'{text}': say 'notebook {_number(nb)}, <step>'"
    if (cid := CELL_ID.fullmatch(frag)) is not None:
        cells = {c: t for c, t in _markdown(nb)}
        if cid.group(1) not in cells:
            return f"{target}: {nb.name} has no markdown cell {cid.group(1)}"
        if cid.group(1) in _in_deep_dives(nb):
            return f"{target}: a graded task leads into a deep dive; what a lab grades is core"
        heads = _headings(cells[cid.group(1)])
    else:
        if unquote(frag) != frag or not SAFE_ANCHOR.fullmatch(frag) or "=" in frag:
            return f"{target}: JupyterLab cannot find this anchor as written (use #cell-id=...)"
        heads = [h for _, t in _markdown(nb) for h in _headings(t) if _anchor(h) == frag]
    if not heads:
        return f"{target}: leads to no heading"
    named = m.group(2)
    if q := re.fullmatch(r'"(.+)"', named):
        ok = any(q.group(1) in h for h in heads)
    elif s := re.fullmatch(r"steps? (\d+)(?: and (\d+))?", named):
        want = f"Step {s.group(1)} " if s.group(2) is None else f"Steps {s.group(1)} and {s.group(2)} "
        ok = any(h.startswith(want) for h in heads)
    else:
        return f"'{text}': name a step ('step 3') or a heading in double quotes"
    return None if ok else f"'{text}' leads to {heads}"


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_every_lab_task_names_the_notebook_step_that_teaches_it(path: Path) -> None:
    tasks = [(c, t) for c, t in _markdown(path) if t.startswith("## Task")]
    assert tasks, f"{path.name} has no '## Task' cells"
    for cell_id, text in tasks:
        links = [(t, u) for t, u in _links(text) if "notebooks/" in u]
        assert links, f"{path.name} cell {cell_id}: link the notebook step that teaches this task"
        wrong = [why for t, u in links if (why := _resolve(path, t, u))]
        assert wrong == [], f"{path.name} cell {cell_id}: {wrong}"


def test_the_link_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    lab = ROOT / "solutions" / "lab01_idempotence.ipynb"
    nb01 = "../notebooks/01_idempotent_producer.ipynb"
    first_step = next(c for c, t in _markdown(NOTEBOOKS / "01_idempotent_producer.ipynb") if t.startswith("## Step 1"))
    assert _resolve(lab, "notebook 01, step 1", f"{nb01}#cell-id={first_step}") is None
    assert _resolve(lab, "notebook 01, step 2", f"{nb01}#cell-id={first_step}")  # names another step
    assert _resolve(lab, "notebook 02, step 1", f"{nb01}#cell-id={first_step}")  # names another notebook
    assert _resolve(lab, "notebook 01, step 1", f"{nb01}#cell-id=00000000")  # no such cell
    assert _resolve(lab, "notebook 01, step 1", f"{nb01}#Step-1-—-producer-1-asks-for-an-identity")  # em dash
    assert _resolve(lab, 'notebook 01, "Where idempotence stops"', f"{nb01}#Where-idempotence-stops") is None
    assert _resolve(lab, 'notebook 01, "Where idempotence stops"', f"{nb01}#Where-idempotence-starts")
    assert _resolve(lab, "notebook 01, step 1", "../notebooks/99_nothing.ipynb#cell-id=x")


def test_the_glossary_defines_every_term_it_lists() -> None:
    anchors = _glossary_anchors()
    assert len(anchors) >= len(REQUIRED_TERMS)
    assert [a for a, body in anchors.items() if len(body.split()) < 3] == [], "every term gets a definition"
    assert [a for a in anchors if not SAFE_ANCHOR.fullmatch(a) or "=" in a] == [], "anchors JupyterLab finds"
    assert [t for t in REQUIRED_TERMS if _anchor(t) not in anchors] == [], "a term the course uses is missing"
    for cell_id, text in _markdown(GLOSSARY):
        for _, target in _links(text):
            if target.startswith("#"):
                assert target[1:] in anchors, f"glossary cell {cell_id}: {target} names no term"
            elif not target.startswith("http"):
                assert (NOTEBOOKS / target.partition("#")[0]).is_file(), f"glossary cell {cell_id}: {target}"


def test_the_index_is_a_map_with_each_module_time_and_prerequisites() -> None:
    text = _markdown(INDEX)[0][1]
    header = next(line for line in text.split("\n") if line.startswith("| #"))
    for column in ("anomaly", "mechanism", "lab", "time", "prerequisites"):
        assert column in header, f"index: the map has a '{column}' column"
    rows = {line.split("|")[1].strip(): line for line in text.split("\n") if re.match(r"^\| \d\d \|", line)}
    assert sorted(rows) == [_number(p) for p in MODULES]
    for path in MODULES:
        cells = [c.strip() for c in rows[_number(path)].split("|")[1:-1]]
        assert cells[-2] == _time_line(path), f"index: module {_number(path)}'s time is not the notebook's Time line"
        assert cells[-1], f"index: module {_number(path)} names its prerequisites"
    assert "What is core" in text and "Deep dive" in text, "index: say what is core and what a deep dive is"
    assert "glossary.ipynb" in text
    anchors = _glossary_anchors()
    wrong = [t for _, t in _links(text) if t.startswith("glossary.ipynb#") and t.partition("#")[2] not in anchors]
    assert wrong == [], f"index: {wrong} name no glossary term"
