"""A notebook's kernel loads what the notebook shows, not the kit (issue 42: "the kit steps back").

Each check runs a fresh interpreter with the import statements of a notebook's code cells and counts the lines of
the ``eoslab`` modules it then holds against the package's lines. Module 03 (the longest module) must load under half
of the package, and no module but 05 loads module 05's fault matrix (``eoslab.demos.pipeline``): ``eoslab.demos``
does not re-export it.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"

PROBE = """
import sys
from pathlib import Path
{imports}
pkg = Path(sys.modules["eoslab"].__file__).parent
count = lambda p: len(Path(p).read_text().splitlines())
total = sum(count(p) for p in pkg.rglob("*.py"))
mods = {{n: m for n, m in list(sys.modules.items()) if n.split(".")[0] == "eoslab" and getattr(m, "__file__", None)}}
print(sum(count(m.__file__) for m in mods.values()), total, " ".join(sorted(mods)))
"""


def notebook_imports(path: Path) -> list[str]:
    """The top-level import statements of ``path``'s code cells, in order (shell and magic lines left out)."""
    found = []
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).splitlines()
        source = "\n".join(line for line in lines if not line.lstrip().startswith(("!", "%")))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        found += [ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    return found


def kernel_load(imports: list[str]) -> tuple[int, int, set[str]]:
    """(lines of eoslab loaded, lines of eoslab, module names) after ``imports`` run in a fresh interpreter."""
    code = PROBE.format(imports="\n".join(["import eoslab", *imports]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded, total, names = done.stdout.strip().split(" ", 2)
    return int(loaded), int(total), set(names.split())


def test_module_03s_kernel_loads_under_half_of_the_package():
    imports = notebook_imports(NOTEBOOKS / "03_transactions.ipynb")
    assert any("eoslab.m03_transactions" in line for line in imports)  # the probe reads the notebook's own imports
    loaded, total, names = kernel_load(imports)
    share = loaded / total
    print(f"module 03's kernel: {loaded} of the package's {total} lines ({share:.0%}), {len(names)} modules")
    assert share < 0.5, f"module 03's kernel loads {share:.0%} of the package ({loaded} of {total} lines)"


def test_only_module_05_loads_the_fault_matrix():
    others = sorted(p for p in NOTEBOOKS.glob("0*.ipynb") if not p.name.startswith("05_"))
    imports = [line for p in others for line in notebook_imports(p)]
    assert len(others) >= 7 and any("eoslab.demos" in line for line in imports)
    _, _, names = kernel_load(imports)
    assert "eoslab.m03_transactions.lesson" in names  # the probe ran the modules' imports
    assert "eoslab.demos.pipeline" not in names, "a module other than 05 loads module 05's fault matrix"
    five = kernel_load(notebook_imports(NOTEBOOKS / "05_exactly_once_pipeline.ipynb"))[2]
    assert "eoslab.demos.pipeline" in five
