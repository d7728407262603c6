"""The grading workflow the packed copies carry (``eoslab/_resources/grade-workflow.yml``): its triggers, its steps
and the kit commands they call, read as GitHub would read them. Its grading step runs for real in
tests/integration/test_grade_workflow.py."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from eoslab._paths import PACKAGE_DIR
from eoslab.cli import build_parser
from eoslab.course._workshop import CI_WORKFLOW, write_ci_workflow

WORKFLOW = PACKAGE_DIR / "_resources" / "grade-workflow.yml"
JOB = "run-autograding-tests"
"""The check run GitHub Classroom's reporter writes the points into (``src/notify-classroom.js``: by that name)."""
ROOT = Path(__file__).resolve().parents[2]


def _workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    loaded["on"] = loaded.pop(True)  # YAML 1.1 reads the key `on` as a boolean
    return loaded


def _steps() -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = _workflow()["jobs"][JOB]["steps"]
    return steps


def test_a_push_that_changes_a_lab_is_graded_and_a_learner_can_grade_every_lab_by_hand() -> None:
    on = _workflow()["on"]
    assert "labs/**" in on["push"]["paths"]
    assert on["workflow_dispatch"]["inputs"]["labs"]["options"] == ["changed", "all"]
    assert "repository_dispatch" in on  # GitHub Classroom's own trigger
    # it reads the repository; the reporter finds this run's check run and writes the points into it
    assert _workflow()["permissions"] == {"contents": "read", "checks": "write", "actions": "read"}


def test_its_steps_install_start_grade_and_keep_the_reports_in_that_order() -> None:
    runs = [s.get("run", "") for s in _steps()]
    order = ["make setup", ".venv/bin/eoslab up", ".venv/bin/eoslab grade", ".venv/bin/eoslab down"]
    at = [next(i for i, r in enumerate(runs) if cmd in r) for cmd in order]
    assert at == sorted(at), runs
    kept = [s for s in _steps() if s.get("uses", "").startswith("actions/upload-artifact")]
    assert any(s["with"]["path"] == "labs/*.report.json" and s["if"] == "always()" for s in kept)


def test_no_expression_is_pasted_into_a_script() -> None:
    """Values reach the scripts through ``env:`` (GitHub's advice against script injection), so the scripts run
    unchanged outside GitHub, as the integration test runs them."""
    for step in _steps():
        assert "${{" not in step.get("run", ""), step


def test_every_kit_command_it_calls_is_one_the_kit_parses() -> None:
    calls = [
        shlex.split(m.group(1).replace('"$nb"', "labs/lab01_idempotence.ipynb"))
        for step in _steps()
        for m in re.finditer(r"\.venv/bin/eoslab ([^|;>#\n]*)", step.get("run", ""))
    ]
    assert [c[0] for c in calls] == ["up", "bench", "grade", "grade", "down"], calls
    parser = build_parser()
    for argv in calls:
        parser.parse_args(argv)  # exits 2 on a command or an option the kit does not have


def test_the_pack_writes_it_where_github_reads_it(tmp_path: Path) -> None:
    written = write_ci_workflow(tmp_path)
    assert written == tmp_path / ".github" / "workflows" / "classroom.yml" == tmp_path / CI_WORKFLOW
    assert written.read_bytes() == WORKFLOW.read_bytes()


def test_the_classroom_reporter_reads_a_runner_per_lab_from_the_grading_steps_outputs() -> None:
    """Each lab of the course is a runner whose ``<RUNNER>_RESULTS`` is the grading step's output of that name
    (written by ``eoslab grade --classroom labs``); the reporter runs whatever the grading step's outcome."""
    (grade,) = [s for s in _steps() if s.get("id") == "grade"]
    assert '.venv/bin/eoslab grade --classroom labs >> "$GITHUB_OUTPUT"' in grade["run"]
    (reporter,) = [s for s in _steps() if "autograding-grading-reporter" in s.get("uses", "")]
    assert reporter["uses"] == "classroom-resources/autograding-grading-reporter@v1"
    assert reporter["if"] == "always() && steps.grade.outcome != 'skipped'"
    runners = reporter["with"]["runners"].split(",")
    assert runners == sorted(p.name[:5] for p in (ROOT / "labs").glob("lab*.ipynb"))  # lab01 ... lab06
    assert reporter["env"] == {f"{r.upper()}_RESULTS": f"${{{{ steps.grade.outputs.{r} }}}}" for r in runners}
