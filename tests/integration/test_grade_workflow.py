"""The packed copy's grading workflow (.github/workflows/classroom.yml) runs its grading step as GitHub would run it:
verbatim, with ``bash -eo pipefail``, in a learner's repository whose history starts at the template. Only the labs
the learner changed are graded; the run fails unless every graded lab has full marks; the score tables go to the
step summary and the reports beside the notebooks, and every lab's tasks with their points go to the step's
outputs, which GitHub Classroom's reporter reads (the workflow's other steps are the kit's set-up and
`eoslab up`/`down`, which the suite runs anyway)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from eoslab.course._workshop import CI_WORKFLOW, _copy_tree, course_files, learner_files, write_ci_workflow
from tests.formats import read_classroom_outputs, read_github_output

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


def _steps(repo: Path) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = yaml.safe_load((repo / CI_WORKFLOW).read_text())["jobs"]["run-autograding-tests"][
        "steps"
    ]
    return steps


def _grading_step(repo: Path) -> str:
    (step,) = [s for s in _steps(repo) if s.get("name") == "Grade the labs"]
    return str(step["run"])


def _reporter(repo: Path) -> tuple[str, dict[str, str]]:
    """The reporter step's runners and how its environment names the grading step's outputs."""
    (step,) = [s for s in _steps(repo) if "autograding-grading-reporter" in s.get("uses", "")]
    named = {var: re.fullmatch(r"\$\{\{ steps\.grade\.outputs\.(\w+) \}\}", v) for var, v in step["env"].items()}
    assert all(named.values()), step["env"]
    return step["with"]["runners"], {var: m.group(1) for var, m in named.items() if m}


def test_a_push_grades_the_changed_labs_and_fails_below_full_marks(healed, tmp_path):
    repo = _learner_repository(tmp_path)
    shutil.copy(ROOT / "solutions" / "lab01_idempotence.ipynb", repo / "labs" / "lab01_idempotence.ipynb")
    lab02 = repo / "labs" / "lab02_pid_ranges.ipynb"
    lab02.write_text(lab02.read_text().replace('"nbformat_minor"', '"nbformat_minor" ', 1))  # touched, not answered
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-am", "my work")
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    lab03 = repo / "labs" / "lab03_transactions.ipynb"  # a report the learner forged and committed: not this run's
    forged = [{"task": "t1", "title": "", "points": 9, "max_points": 9, "passed": True, "message": "forged"}]
    sha = hashlib.sha256(lab03.read_bytes()).hexdigest()
    claim = {"notebook": lab03.name, "sha256": sha, "score": 9, "max_score": 9, "tasks": forged}
    lab03.with_suffix(".report.json").write_text(json.dumps(claim))
    env = {**os.environ, "WHICH": "changed", "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
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
    lab01 = json.loads((repo / "labs" / "lab01_idempotence.report.json").read_text())
    _the_classroom_dashboard_gets_each_tasks_points(repo, outputs, lab01)


def _the_classroom_dashboard_gets_each_tasks_points(repo: Path, outputs: Path, lab01: dict[str, Any]) -> None:
    """The step's outputs, read as the reporter reads them through the workflow's own wiring (tests/formats.py)."""
    runners, env = _reporter(repo)
    report = read_classroom_outputs(read_github_output(outputs), runners, env)
    labs = {r: report.results[r] for r in runners.split(",")}
    assert [t["score"] for t in labs["lab01"]["tests"]] == [t["points"] for t in lab01["tasks"]]
    assert labs["lab01"]["status"] == "pass" and labs["lab01"]["max_score"] == lab01["max_score"]
    assert labs["lab02"]["status"] == "fail" and sum(t["score"] for t in labs["lab02"]["tests"]) == 0
    for r in ("lab03", "lab04", "lab05", "lab06"):  # not changed, not graded: 0 of their points, and why
        assert labs[r]["max_score"] > 0 and {t["score"] for t in labs[r]["tests"]} == {0}
        assert "as the template gave it" in labs[r]["tests"][0]["message"], labs[r]
    assert report.total_points == lab01["score"] and report.fails_job
    assert report.max_points == sum(r["max_score"] for r in labs.values())
