"""Labs are generated from solutions: one source, no drift (as nbgrader's solution regions).

In a solution notebook a region

    ### BEGIN SOLUTION
    config = {"enable.idempotence": True}
    ### STUB config = {}  # TODO: which settings make the ack loss harmless?
    ### END SOLUTION

becomes, in the lab, just the stub lines (``config = {}  # TODO: ...``), indented like
the region. Stub lines are comments in the solution, so the solution runs as written.
A region without stub lines becomes ``# TODO: your code here``. Outputs and execution
counts are stripped; cell ids and the graded cells' metadata are kept.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from eoslab.errors import GradingError

BEGIN = re.compile(r"^(\s*)### BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*### END SOLUTION\s*$")
STUB = re.compile(r"^\s*### STUB ?(.*)$")


def strip_solution(source: str) -> str:
    out: list[str] = []
    lines = source.split("\n")
    i = 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent, stubs = m.group(1), []
        i += 1
        while i < len(lines) and not END.match(lines[i]):
            s = STUB.match(lines[i])
            if s:
                stubs.append(indent + s.group(1))
            i += 1
        if i == len(lines):
            raise GradingError("A '### BEGIN SOLUTION' has no '### END SOLUTION': close the region.")
        out.extend(stubs or [indent + "# TODO: your code here"])
        i += 1
    return "\n".join(out)


def lab_from_solution(nb: dict[str, Any]) -> dict[str, Any]:
    lab: dict[str, Any] = json.loads(json.dumps(nb))
    for cell in lab["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell["source"] = strip_solution(src)
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    lab.setdefault("metadata", {})["eoslab"] = {"generated_from": "solutions/ (eoslab labs): edit the solution"}
    return lab


def render(nb: dict[str, Any]) -> str:
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def generate_labs(root: Path, check: bool = False) -> list[Path]:
    """Write labs/X.ipynb for every solutions/X.ipynb; with ``check``, return the ones that would change."""
    changed = []
    for sol in sorted((root / "solutions").glob("lab*.ipynb")):
        target = root / "labs" / sol.name
        text = render(lab_from_solution(json.loads(sol.read_text())))
        if not target.is_file() or target.read_text() != text:
            changed.append(target)
            if not check:
                target.parent.mkdir(exist_ok=True)
                target.write_text(text)
    return changed
