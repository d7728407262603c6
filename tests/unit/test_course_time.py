"""`eoslab course time` (issue 23, item 3): words and cells split into the core path and the deep dives, the
times file read, the sums, the Time lines rewritten and nothing else, the command's refusals; and a real
measurement, of synthetic notebooks that need no cluster (a kernel of this Python, a `time.sleep`)."""

from __future__ import annotations

import difflib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from eoslab import cli
from eoslab.cli import _course
from eoslab.course import WORKSHOP_MINUTES, course_time, time_table, write_time_lines
from eoslab.course._reading import Stretch, count_words, split
from eoslab.course._time_lines import rounded
from eoslab.course._timing import read_times
from eoslab.errors import DataError

ROOT = Path(__file__).resolve().parents[2]
DEEP = "### Deep dive — the inside story (optional: nothing graded depends on it)"


def _md(cid: str, text: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": cid, "metadata": {}, "source": text.splitlines(keepends=True)}


def _code(cid: str, text: str, grade: dict[str, Any] | None = None) -> dict[str, Any]:
    meta = {"eoslab": {"grade": grade}} if grade else {}
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cid,
        "metadata": meta,
        "outputs": [],
        "source": text.splitlines(keepends=True),
    }


def _nb(*cells: dict[str, Any]) -> dict[str, Any]:
    return {
        "cells": list(cells),
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _write(path: Path, nb: dict[str, Any], *, indent: int = 1) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _module(time_line: str) -> dict[str, Any]:
    """A module notebook: 10 core words and 2 core cells around a deep dive of 6 words and 1 cell."""
    return _nb(
        _md("title", "# 00 · Alpha"),  # 2 words: "00", "Alpha"
        _md("overview", f"## Overview\n\n{time_line}"),  # "Overview", "Time:", "teaching", "~N", "min", ...
        _code("core-1", "x = 1"),
        _md("dive", f"{DEEP}\n\nfour more words here"),
        _code("deep-1", "y = 2"),
        _md("end", "*End of deep dive.*"),
        _md("links", "See [the glossary](glossary.ipynb#x) — now."),  # 4 words
        _code("core-2", "z = 3"),
        _code("empty", "   \n"),  # runs nothing: not a cell to time
    )


def _make_course(root: Path) -> Path:
    """Modules 00 (no lab) and 01 (a lab of 2 graded tasks), an index with their map rows."""
    _write(root / "notebooks" / "00_alpha.ipynb", _module("**Time:** teaching ~15 min · no lab"))
    _write(root / "notebooks" / "01_beta.ipynb", _module("**Time:** teaching ~30 min · lab ~55 min"), indent=2)
    graded = [{"task": f"t{i}", "points": 1, "title": f"task {i}"} for i in (1, 2)]
    _write(
        root / "solutions" / "lab01_beta.ipynb",
        _nb(_code("lab-setup", "import os"), _code("lab-t1", "a = 1", graded[0]), _code("lab-t2", "b = 2", graded[1])),
    )
    index = _md(
        "map",
        "# The course\n\n| # | module | time | prerequisites |\n| --- | --- | --- | --- |\n"
        "| 00 | Alpha | teaching ~15 min · no lab | none |\n"
        "| 01 | Beta | teaching ~30 min · lab ~55 min | 00 |\n\nEnd.",
    )
    _write(root / "notebooks" / "index.ipynb", _nb(index, _code("setup", "import eoslab")))
    return root


def _times(root: Path, seconds: dict[str, dict[str, float]]) -> Path:
    facts = {"cores": 2, "memory_gib": 7.8, "os": "Linux 6.1", "date": "2025-06-01T10:00:00Z"}
    data = {nb: {"cells": cells, "total_s": sum(cells.values()), "measured_on": facts} for nb, cells in seconds.items()}
    return _write(root / "docs" / "course-times.json", data)


ALL_MEASURED = {
    "notebooks/00_alpha.ipynb": {"core-1": 30.0, "core-2": 90.0, "deep-1": 60.0},
    "notebooks/01_beta.ipynb": {"core-1": 6.0, "core-2": 6.0, "deep-1": 12.0},
    "solutions/lab01_beta.ipynb": {"lab-setup": 60.0, "lab-t1": 30.0, "lab-t2": 30.0},
}


def test_words_are_what_a_reader_reads() -> None:
    assert count_words("See [the glossary](glossary.ipynb#producer-id) — now.") == 4
    assert count_words("| # | module |\n| --- | --- |\n| 01 | Beta |") == 3  # '#' '|' '---' are not words
    assert count_words("<details><summary>Answer</summary>\n\nYes, because.</details>") == 3
    assert count_words("![a diagram](x.png) and `code` too") == 5


def test_a_notebook_without_deep_dives_is_all_core() -> None:
    nb = _nb(_md("a", "# Title here"), _code("c1", "x = 1"), _md("b", "one two three"), _code("c2", "y"))
    core, dives = split(nb, "nb")
    assert (core, dives) == (Stretch("core", 5, ("c1", "c2")), [])


def test_a_deep_dive_runs_from_its_heading_to_its_end_line() -> None:
    core, dives = split(_module("**Time:** teaching ~15 min · no lab"), "nb")
    # heading (Deep dive — the inside story: 5 words; the '(optional ...)' tail: 6) + 4 + 'End of deep dive.': 4
    assert dives == [Stretch("Deep dive — the inside story", 5 + 6 + 4 + 4, ("deep-1",))]
    assert core.cells == ("core-1", "core-2")
    # title 2 + 'Overview' 1 + Time line 6 ("**Time:**", teaching, ~15, min, no, lab; not '·') + links 4
    assert core.words == 2 + 1 + 6 + 4


def test_a_deep_dive_without_its_end_line_is_refused_naming_the_cell() -> None:
    nb = _nb(_md("intro", "core"), _md("dd", DEEP), _code("c", "x"))
    with pytest.raises(DataError, match=r"^nb\.ipynb: the deep dive of cell dd has no 'End of deep dive\.' line"):
        split(nb, "nb.ipynb")


def test_the_times_file_read_and_refused(tmp_path: Path) -> None:
    assert read_times(tmp_path / "none.json") == {}  # nothing measured yet
    times = read_times(_times(tmp_path, ALL_MEASURED))
    assert times["notebooks/00_alpha.ipynb"].cells == {"core-1": 30.0, "core-2": 90.0, "deep-1": 60.0}
    assert times["notebooks/00_alpha.ipynb"].measured_on["cores"] == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(
        DataError, match=r"is not a times file .*: measure again with `eoslab course time --measure`\.$"
    ):
        read_times(broken)
    broken.write_text(json.dumps({"notebooks/00_alpha.ipynb": {"cells": {"c": "fast"}}}))
    with pytest.raises(DataError, match=r"the entry of notebooks/00_alpha\.ipynb has no cells' seconds"):
        read_times(broken)


def test_the_sums_core_reading_plus_run_plus_lab_and_deep_dives_apart(tmp_path: Path) -> None:
    root = _make_course(tmp_path)
    _times(root, ALL_MEASURED)
    course = course_time(root, wpm=13, lab_minutes_per_task=10)
    alpha, beta = course.modules
    assert alpha.core.reading_min == pytest.approx(13 / 13)
    assert alpha.core.run_min == pytest.approx(2.0) and alpha.core.not_measured == 0
    assert alpha.lab is None and alpha.minutes == pytest.approx(3.0)
    assert [d.run_min for d in alpha.deep_dives] == [pytest.approx(1.0)]  # measured, and apart
    assert beta.lab is not None and beta.lab.tasks == 2
    assert beta.lab.minutes == pytest.approx(2 * 10 + 2.0)
    assert beta.core.words == 14  # its Time line has one word more: "lab ~55 min" for "no lab"
    assert beta.minutes == pytest.approx(14 / 13 + 0.2 + 22.0)
    assert course.core_path_min == pytest.approx(3.0 + 14 / 13 + 22.2)
    assert course.deep_dives_min == pytest.approx((19 / 13 + 1.0) + (19 / 13 + 0.2))
    assert course.fits and course.not_measured == 0

    text = time_table(course)
    assert "Core path with labs: 26.3 min (0 h 26 min): fits a one-day workshop (6 h)." in text
    assert "Measured on: 2 cores, 7.8 GiB, Linux 6.1, 2025-06-01." in text
    assert "the inside story" in text.split("Deep dives, apart")[1]
    assert json.loads(json.dumps(course.to_json()))["core_path_min"] == pytest.approx(course.core_path_min)


def test_cells_missing_from_the_times_file_are_not_measured_and_a_long_course_does_not_fit(tmp_path: Path) -> None:
    root = _make_course(tmp_path)
    course = course_time(root, lab_minutes_per_task=WORKSHOP_MINUTES / 2 + 1)  # no times file at all
    assert course.not_measured == 2 + 2 + 3 and not course.fits
    assert [m.core.run_min for m in course.modules] == [0.0, 0.0]
    text = time_table(course)
    assert "does NOT fit a one-day workshop (6 h)" in text and "Measured on: nothing measured yet." in text
    assert "7 code cells on the core path have no measured run time" in text


def _changed_lines(before: str, after: str) -> list[str]:
    return [d for d in difflib.ndiff(before.splitlines(), after.splitlines()) if d[:1] in "+-"]


def test_write_notebooks_changes_the_time_lines_and_nothing_else(tmp_path: Path) -> None:
    root = _make_course(tmp_path)
    _times(root, ALL_MEASURED)
    paths = [root / "notebooks" / n for n in ("00_alpha.ipynb", "01_beta.ipynb", "index.ipynb")]
    before = {p: p.read_text() for p in paths}
    course = course_time(root, wpm=13)

    assert write_time_lines(root, course) == paths
    after = {p: p.read_text() for p in paths}
    assert _changed_lines(before[paths[0]], after[paths[0]]) == [
        '-     "**Time:** teaching ~15 min · no lab"',
        '+     "**Time:** teaching ~5 min · no lab"',
    ]
    assert _changed_lines(before[paths[1]], after[paths[1]]) == [  # written with indent=2: kept
        '-         "**Time:** teaching ~30 min · lab ~55 min"',
        '+         "**Time:** teaching ~5 min · lab ~25 min"',
    ]
    assert sorted(_changed_lines(before[paths[2]], after[paths[2]])) == [
        '+     "| 00 | Alpha | teaching ~5 min · no lab | none |\\n",',
        '+     "| 01 | Beta | teaching ~5 min · lab ~25 min | 00 |\\n",',
        '-     "| 00 | Alpha | teaching ~15 min · no lab | none |\\n",',
        '-     "| 01 | Beta | teaching ~30 min · lab ~55 min | 00 |\\n",',
    ]
    for p in paths:  # still notebooks, same cells and ids, no outputs
        old, new = json.loads(before[p]), json.loads(after[p])
        assert [c["id"] for c in new["cells"]] == [c["id"] for c in old["cells"]]
        assert all(c.get("outputs", []) == [] for c in new["cells"])
    assert write_time_lines(root, course) == []  # said already: nothing to write


def test_write_notebooks_keeps_a_source_held_as_one_string(tmp_path: Path) -> None:
    """nbformat also reads a cell's source as one string, and keys in any order (as notebooks 04 and 06 are
    written): the Time line is swapped inside that string, and the file's text changes on that line only."""
    root = _make_course(tmp_path)
    path = root / "notebooks" / "00_alpha.ipynb"
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        cell["source"] = "".join(cell["source"])
    nb["cells"] = [dict(reversed(list(cell.items()))) for cell in nb["cells"]]  # keys unsorted
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    _times(root, ALL_MEASURED)
    before = path.read_text()
    write_time_lines(root, course_time(root, wpm=13))
    assert _changed_lines(before, path.read_text()) == [
        '-    "source": "## Overview\\n\\n**Time:** teaching ~15 min · no lab",',
        '+    "source": "## Overview\\n\\n**Time:** teaching ~5 min · no lab",',
    ]


def test_write_notebooks_on_a_copy_of_the_course_changes_one_line_a_notebook(tmp_path: Path) -> None:
    """The course's own files, as they are formatted: each module's Time line and the index's rows change,
    nothing else, and the map still says what each notebook says (tests/unit/test_course_shape.py)."""
    import shutil

    for folder in ("notebooks", "solutions"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    modules = course_time(tmp_path).modules
    cells = {
        m.notebook: {c["id"]: 3.0 for c in json.loads((tmp_path / m.notebook).read_text())["cells"]} for m in modules
    }
    _times(tmp_path, cells)
    before = {p: p.read_text() for p in (tmp_path / "notebooks").glob("*.ipynb")}
    course = course_time(tmp_path, wpm=60)  # slower reading: the times move
    written = write_time_lines(tmp_path, course)
    restated = [p for p in written if p.name != "index.ipynb"]
    assert restated and written[-1].name == "index.ipynb"
    for path, text in before.items():
        changed = _changed_lines(text, path.read_text())
        want = 2 * len(restated) if path.name == "index.ipynb" else 2 * (path in restated)
        assert len(changed) == want, f"{path.name}: {changed}"
    index = (tmp_path / "notebooks" / "index.ipynb").read_text()
    for m in course.modules:
        nb = json.loads((tmp_path / m.notebook).read_text())
        lines = [t for c in nb["cells"] for t in "".join(c["source"]).split("\n") if t.startswith("**Time:**")]
        line = lines[0]
        assert f"| {line.removeprefix('**Time:** ')} |" in index, f"{m.notebook}: the map says another time"


def test_rounding_is_up_to_five_minutes() -> None:
    assert [rounded(m) for m in (0.0, 0.4, 5.0, 5.01, 12.5, 15.0, 59.9)] == [5, 5, 5, 10, 15, 15, 60]


def test_write_notebooks_is_refused_while_a_core_cell_is_not_measured(tmp_path: Path) -> None:
    root = _make_course(tmp_path)
    partly = {**ALL_MEASURED, "notebooks/01_beta.ipynb": {"core-1": 6.0}}
    _times(root, partly)
    before = (root / "notebooks" / "01_beta.ipynb").read_text()
    with pytest.raises(DataError, match=r"^notebooks/01_beta\.ipynb has code cells without a measured run time"):
        write_time_lines(root, course_time(root))
    assert (root / "notebooks" / "01_beta.ipynb").read_text() == before


def _one_sentence(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.startswith("eoslab: ") and err.endswith(".\n") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(
    "argv,said",
    [
        (["--wpm", "fast"], "--wpm 'fast': give a number above 0."),
        (["--wpm", "0"], "--wpm '0': give a number above 0."),
        (["--lab-minutes-per-task", "-1"], "--lab-minutes-per-task '-1': give a number of 0 or more."),
        (["--cell-timeout", "-5"], "--cell-timeout '-5': give a number above 0."),
        (["--labs"], "--labs goes with --measure"),
        (["notebooks/99_nothing.ipynb"], "notebooks/99_nothing.ipynb: no such notebook"),
    ],
)
def test_bad_input_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    monkeypatch.chdir(_make_course(tmp_path))
    assert cli.main(["course", "time", "--course", str(tmp_path), *argv]) == 2
    assert said in _one_sentence(capsys)


def test_a_folder_that_is_not_a_course_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["course", "time", "--course", str(tmp_path)]) == 2
    assert "holds no notebooks/ folder" in _one_sentence(capsys)


class _Cluster:
    def __init__(self, up: bool) -> None:
        self.up = up

    def is_up(self) -> bool:
        return self.up


def test_measure_refuses_without_the_cluster_before_running_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _make_course(tmp_path)
    monkeypatch.setattr(_course, "cluster_of", lambda args: _Cluster(up=False))
    assert cli.main(["course", "time", "--measure", "--course", str(root)]) == 1
    assert "the cluster is not up" in _one_sentence(capsys) and not (root / "docs").exists()


def test_the_command_reads_the_times_file_and_writes_the_notebooks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _make_course(tmp_path)
    _times(root, ALL_MEASURED)
    assert cli.main(["course", "time", "--course", str(root), "--json", "--write-notebooks", "--wpm", "13"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["core_path_min"] == pytest.approx(3.0 + 14 / 13 + 22.2)
    assert err.count("wrote ") == 3
    assert "**Time:** teaching ~5 min · lab ~25 min" in (root / "notebooks" / "01_beta.ipynb").read_text()


def test_measure_runs_each_notebook_keeps_its_cells_and_names_the_failing_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real run: a kernel of this Python, a cell that sleeps 0.2 s, a cell that raises, a cell past the
    notebook's limit; each failure ends its own notebook only."""
    root = tmp_path
    nbs = root / "notebooks"
    _write(nbs / "00_sleeps.ipynb", _nb(_md("t", "# Sleeps"), _code("nap", "import time\ntime.sleep(0.2)")))
    _write(nbs / "01_raises.ipynb", _nb(_code("ok", "x = 1"), _code("bad", "1 / 0"), _code("after", "y = 2")))
    _write(nbs / "02_hangs.ipynb", _nb(_code("quick", "z = 3"), _code("hang", "import time\ntime.sleep(60)")))
    monkeypatch.setattr(_course, "cluster_of", lambda args: _Cluster(up=True))
    started = time.monotonic()
    code = cli.main(["course", "time", "--measure", "--course", str(root), "--notebook-limit", "3"])
    assert time.monotonic() - started < 60, "the notebook's limit stopped the hanging cell"
    out = capsys.readouterr().out
    assert code == 1  # a notebook failed
    times = read_times(root / "docs" / "course-times.json")
    assert times["notebooks/00_sleeps.ipynb"].cells["nap"] >= 0.2 and times["notebooks/00_sleeps.ipynb"].error is None
    assert times["notebooks/00_sleeps.ipynb"].measured_on["cores"] >= 1
    assert set(times["notebooks/01_raises.ipynb"].cells) == {"ok"}
    assert times["notebooks/01_raises.ipynb"].error == (
        "notebooks/01_raises.ipynb: cell bad (#2) raised ZeroDivisionError: division by zero"
    )
    assert set(times["notebooks/02_hangs.ipynb"].cells) == {"quick"}
    assert times["notebooks/02_hangs.ipynb"].error == (
        "notebooks/02_hangs.ipynb: cell hang (#2) did not finish within the rest of the notebook's limit."
    )
    assert "measured notebooks/00_sleeps.ipynb: 1 cells" in out and "cell bad (#2) raised" in out
    assert "Core path with labs" in out  # the table follows, from what was measured


_INTERRUPTED = """
import sys
from pathlib import Path
from eoslab.course import measure_times
root = Path(sys.argv[1])
try:
    measure_times(root, [root / "notebooks" / "00_slow.ipynb"])
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_keeps_what_was_measured(tmp_path: Path) -> None:
    flag = tmp_path / "notebooks" / "first-done"
    _write(
        tmp_path / "notebooks" / "00_slow.ipynb",
        _nb(
            _code("first", "import time\ntime.sleep(0.2)\nopen('first-done', 'w').close()"),
            _code("slow", "time.sleep(60)"),
        ),
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED, str(tmp_path)],
        cwd=ROOT,
        env={**_env(), "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a shell's `&` ignores SIGINT
    )
    try:
        deadline = time.monotonic() + 60
        while not flag.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)  # into the slow cell
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        proc.kill()
    entry = read_times(tmp_path / "docs" / "course-times.json")["notebooks/00_slow.ipynb"]
    assert set(entry.cells) == {"first"} and entry.error == "notebooks/00_slow.ipynb: interrupted after 1 cells"


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_the_course_itself_splits_and_counts() -> None:
    """The real notebooks: every deep dive closes, and each module has words and cells on its core path."""
    course = course_time(ROOT, times_file=ROOT / "no-such-times.json")
    assert [m.module for m in course.modules] == ["00", "01", "02", "03", "04", "05", "06", "07"]
    assert [m.module for m in course.modules if m.optional] == ["07"]  # listed apart, not in the core path
    assert course.core_path_min == sum(m.minutes for m in course.modules if m.module != "07")
    assert course.optional_min == course.modules[-1].minutes > 0
    assert all(m.core.words > 500 and m.core.code_cells > 5 for m in course.modules)
    assert sum(len(m.deep_dives) for m in course.modules) >= 10
