"""The packed copy's grading workflow (.github/workflows/grade.yml) runs its grading step as GitHub would run it:
verbatim, with ``bash -eo pipefail``, in a learner's repository whose history starts at the template. Only the labs
the learner changed are graded; the run fails unless every graded lab has full marks; the score tables go to the
step summary and the reports beside the notebooks (the workflow's other steps are the kit's set-up and
`eoslab up`/`down`, which the suite runs anyway)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from eoslab.course._workshop import CI_WORKFLOW, _copy_tree, course_files, learner_files, write_ci_workflow

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.cluster, pytest.mark.destructive]  # lab 01's check kills a leader


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _learner_repository(tmp_path: Path) -> Path:
    """The learner copy as `eoslab workshop pack` writes it, committed as the template, the kit's venv linked in."""
    repo = tmp_path / "learner"
    _copy_tree(ROOT, learner_files(course_files(ROOT)), repo)
    write_ci_workflow(repo)
    (repo / ".venv").symlink_to(ROOT / ".venv")
    _git(repo, "init", "-q")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "template")
    return repo


def _grading_step(repo: Path) -> str:
    steps = yaml.safe_load((repo / CI_WORKFLOW).read_text())["jobs"]["grade"]["steps"]
    (step,) = [s for s in steps if s.get("name") == "Grade the labs"]
    return str(step["run"])


def test_a_push_grades_the_changed_labs_and_fails_below_full_marks(healed, tmp_path):
    repo = _learner_repository(tmp_path)
    shutil.copy(ROOT / "solutions" / "lab01_idempotence.ipynb", repo / "labs" / "lab01_idempotence.ipynb")
    lab02 = repo / "labs" / "lab02_pid_ranges.ipynb"
    lab02.write_text(lab02.read_text().replace('"nbformat_minor"', '"nbformat_minor" ', 1))  # touched, not answered
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "my work")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "WHICH": "changed", "GITHUB_STEP_SUMMARY": str(summary)}
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _grading_step(repo)],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = summary.read_text()
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]  # lab 02 is not at full marks
    assert re.search(r"lab01_idempotence\.ipynb: (\d+) / \1 points", out), out
    assert re.search(r"lab02_pid_ranges\.ipynb: 0 / \d+ points", out), out
    assert not re.search(r"lab0[3-6]", out), out  # the labs the learner did not change are not graded
    assert out.count("```") == 4  # each score table fenced in the step summary
    assert (repo / "labs" / "lab01_idempotence.report.json").is_file()
