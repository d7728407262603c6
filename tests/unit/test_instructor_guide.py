"""docs/instructor.md stays true to the kit: its links open, the commands it cites parse, its course-time
table is what `eoslab course time` counts, its schedule adds up, and the learner's copy leaves it out."""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from eoslab.cli import build_parser
from eoslab.course import course_time
from eoslab.course._workshop import course_files, learner_files

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "instructor.md"
TEXT = GUIDE.read_text()
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CITED = re.compile(r"`(?:\.venv/bin/)?(eoslab [^`]+)`|^(?:\.venv/bin/)?(eoslab [^#\n]+?)\s*(?:#.*)?$", re.M)
TEACHING_DAY_MIN = 360


def _section(title: str) -> str:
    return TEXT.split(title, 1)[1].split("\n## ", 1)[0]


def _rows(table_text: str) -> list[list[str]]:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table_text.splitlines()]
    return [r for r in rows if len(r) > 1 and not set(r[0]) <= {"-", " "}][1:]  # no header, no rule


def test_every_link_of_the_guide_and_of_the_readme_workshop_section_opens() -> None:
    readme = (ROOT / "README.md").read_text().split("## A workshop", 1)[1].split("\n## ", 1)[0]
    links = [(GUIDE.parent / t) for t in LINK.findall(TEXT) if not t.startswith(("http", "#"))]
    links += [(ROOT / t) for t in LINK.findall(readme) if not t.startswith(("http", "#"))]
    assert ROOT / "docs/instructor.md" in links
    for path in links:
        assert path.resolve().is_file(), path


def _cited() -> list[str]:
    found = [a or b for a, b in CITED.findall(TEXT)]
    return [c for c in found if "<" not in c and not c.endswith("--help")]


def _accepts(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """What of ``argv`` the CLI does not know (None: all of it): each word that names a subcommand goes down
    into it, and every option must be one of the parser reached. A command named in prose may leave its
    required arguments out (`eoslab workshop pack`), so they are not asked for."""
    for word in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and word in subs[0].choices:
            parser = subs[0].choices[word]
        elif word.startswith("-") and word not in parser._option_string_actions:
            return f"{word} is not an option of `{parser.prog}`"
        elif subs and not word.startswith("-") and parser.prog == "eoslab":
            return f"{word} is not a subcommand of eoslab"
    return None


def test_every_command_the_guide_cites_is_one_the_cli_accepts() -> None:
    cited = _cited()
    assert "eoslab grade --class submissions/ --workers 2" in cited and "eoslab heal" in cited
    parser = build_parser()
    assert _accepts(parser, ["grade", "--klass"]) == "--klass is not an option of `eoslab grade`"
    assert _accepts(parser, ["mend"]) == "mend is not a subcommand of eoslab"
    for command in cited:
        assert _accepts(parser, shlex.split(command)[1:]) is None, f"docs/instructor.md cites `{command}`"


def test_the_course_time_table_is_what_eoslab_course_time_counts() -> None:
    """Reading minutes and graded tasks per module at the stated 120 words/min: edit a notebook or a lab and the
    guide's table (and so its schedule) must be looked at again."""
    course = course_time(ROOT)
    rows = {r[0].split()[0]: r for r in _rows(_section("`eoslab course time` printed this").split("\n\n")[1])}
    for m in course.modules:
        row = rows.pop(m.module)
        assert row[1] == f"{m.core.reading_min:.1f}", (m.module, row)
        assert row[2] == (str(m.lab.tasks) if m.lab else "—"), (m.module, row)
        assert ("optional" in row[0]) == (m.optional is not None), f"module {m.module}: say whether it is optional"
    assert rows.keys() == {"**total**"}
    core = [m for m in course.modules if not m.optional]  # an optional module is listed, not counted
    labs = [m.lab for m in core if m.lab]
    total = sum(m.core.reading_min for m in core) + sum(lab.task_min for lab in labs)
    assert rows["**total**"][2:4] == [str(sum(lab.tasks for lab in labs)), f"{sum(lab.task_min for lab in labs):g}"]
    assert rows["**total**"][4].startswith(f"**{total:.1f}**")


def test_the_schedule_adds_up_to_a_teaching_day_and_its_clock_times_follow() -> None:
    rows = [r for r in _rows(_section("### Schedule")) if r[0][:1].isdigit()]
    clock = [datetime.strptime(r[0], "%H:%M") for r in rows]
    minutes = [int(r[2]) if r[2].isdigit() else None for r in rows]
    for i in range(1, len(rows) - 1):  # from 09:00 on, each block starts where the one before it ended
        m = minutes[i]
        if m is not None:
            assert clock[i] + timedelta(minutes=m) == clock[i + 1], rows[i]
    teaching = sum(m for r, m in zip(rows, minutes, strict=True) if m is not None and "**" not in r[1])
    assert teaching <= TEACHING_DAY_MIN
    assert f"teaching {teaching} min" in rows[-1][3]


@pytest.mark.parametrize("kept", ["docs/course-time.md", "labs/lab01_idempotence.ipynb"])
def test_the_learners_copy_leaves_the_guide_out(kept: str) -> None:
    learner = learner_files(course_files(ROOT))
    assert "docs/instructor.md" in course_files(ROOT) and "docs/instructor.md" not in learner
    assert kept in learner


def test_the_class_notebook_is_in_the_instructors_copy_only() -> None:
    """`eoslab workshop pack` copies every course file to the instructor and :func:`learner_files` of them to
    the learner: the class notebook reads every learner's hand-in, which is not a learner's to run."""
    files = course_files(ROOT)
    assert "instructor/class_runs.ipynb" in files
    assert [f for f in learner_files(files) if f.startswith("instructor/")] == []
    assert "notebooks/06_cost_of_exactly_once.ipynb" in learner_files(files)


def test_grading_starts_in_the_learners_copy(tmp_path: Path) -> None:
    """`eoslab grade` runs pytest (nbval) on a lab inside the learner's copy: whatever pytest reads at start-up
    there (pyproject.toml's settings, any conftest.py) must not need what the copy leaves out (tests/)."""
    learner = learner_files(course_files(ROOT))
    startup = [f for f in learner if Path(f).name in ("pyproject.toml", "conftest.py", "pytest.ini", "setup.cfg")]
    lab = "labs/lab01_idempotence.ipynb"
    for rel in [*startup, lab]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            Path(lab).name,
            "--nbval-lax",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=tmp_path / "labs",
        env={**os.environ, "PYTEST_ADDOPTS": "-p no:cacheprovider"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "Cell 0" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
