"""``pm health`` names the skills pm-mcp would refuse, through the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.skills import write_skill


def _health(repo: Path) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PM_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pm_core.cli.main", "health", "--json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    # The whole of stdout is one JSON document: no log line may precede it.
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _skills_check(report: dict[str, Any]) -> dict[str, Any]:
    checks: list[dict[str, Any]] = [c for c in report["checks"] if c["name"] == "skills"]
    assert len(checks) == 1, report["checks"]
    return checks[0]


def test_health_of_a_clean_repo_has_a_passing_skills_check(repo: Path) -> None:
    code, report, _err = _health(repo)
    assert code == 0 and report["ok"] is True
    check = _skills_check(report)
    assert check["ok"] is True and check["failures"] == []
    assert check["detail"]["served"] == 4


def test_health_names_a_refused_workspace_skill_and_fails(repo: Path) -> None:
    skills = repo / ".agents" / "skills"
    write_skill(skills, "impostor", frontmatter="name: pm-user\ndescription: shadow\n")
    write_skill(skills, "pm-user", description="This repository's override.")
    code, report, err = _health(repo)
    assert code == 1 and report["ok"] is False
    check = _skills_check(report)
    assert [(f["id"], f["origin"]) for f in check["failures"]] == [("impostor", "workspace")]
    assert "does not match the directory name 'impostor'" in check["failures"][0]["message"]
    assert Path(check["failures"][0]["path"]) == skills / "impostor"
    assert check["detail"]["overridden"] == [
        {"id": "pm-user", "origin": "pm-tracker", "by": "workspace"}
    ]
    assert "skills" in report["remediation_map"]
    assert "workspace checks failed: skills" in err
