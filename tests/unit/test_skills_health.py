"""The ``skills`` check of ``pm health``: refused skills named with reason and origin."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import structlog

from pm_core.sdk import skills_health, with_skills_check
from tests.support.skills import package_origins, workspace_origin, write_skill

REPORT: dict[str, Any] = {
    "ok": True,
    "checks": [{"name": "settings", "ok": True, "problems": []}],
    "counts": {"items": 0, "corrupt": 0},
    "remediation_map": {},
}


def test_clean_origins_are_healthy_and_count_the_served_skills(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "local-notes")
    check = skills_health([*package_origins(), workspace_origin(tmp_path / "skills")])
    assert check == {
        "name": "skills",
        "ok": True,
        "problems": [],
        "failures": [],
        "detail": {"served": 5, "refused": 0, "overridden": []},
    }


def test_refused_skill_is_named_with_reason_origin_and_path(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "evil", frontmatter="name: evil\ndescription: &d x\n")
    write_skill(skills, "pm-user", description="Local override.")
    check = skills_health([*package_origins(), workspace_origin(skills)])
    assert check["ok"] is False
    assert check["failures"] == [
        {
            "id": "evil",
            "message": "frontmatter uses a YAML anchor",
            "origin": "workspace",
            "path": str(skills / "evil"),
        }
    ]
    assert check["problems"] == ["workspace skill 'evil': frontmatter uses a YAML anchor"]
    assert check["detail"] == {
        "served": 4,
        "refused": 1,
        "overridden": [{"id": "pm-user", "origin": "pm-tracker", "by": "workspace"}],
    }


def test_a_refused_origin_is_reported_as_a_whole(tmp_path: Path) -> None:
    write_skill(tmp_path / "real", "fine")
    os.symlink(tmp_path / "real", tmp_path / "linked")
    check = skills_health([workspace_origin(tmp_path / "linked")])
    assert [(f["id"], f["path"]) for f in check["failures"]] == [("*", str(tmp_path / "linked"))]
    assert "is a symbolic link" in check["failures"][0]["message"]


def test_the_check_reports_refusals_instead_of_logging_them(tmp_path: Path) -> None:
    # pm health prints JSON on stdout, where structlog's default output goes.
    write_skill(tmp_path / "skills", "evil", frontmatter="name: other\ndescription: x\n")
    with structlog.testing.capture_logs() as logs:
        check = skills_health([workspace_origin(tmp_path / "skills")])
    assert check["failures"] and logs == []


def test_refused_skills_make_the_report_unhealthy_with_a_remedy(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "evil", frontmatter="name: other\ndescription: x\n")
    merged = with_skills_check(REPORT, [workspace_origin(tmp_path / "skills")])
    assert merged["ok"] is False
    assert [c["name"] for c in merged["checks"]] == ["settings", "skills"]
    assert "skills" in merged["remediation_map"]
    assert REPORT["ok"] is True and len(REPORT["checks"]) == 1 and REPORT["remediation_map"] == {}


def test_healthy_skills_leave_the_verdict_and_remedies_alone(tmp_path: Path) -> None:
    unhealthy = {**REPORT, "ok": False, "remediation_map": {"folders": "pm init"}}
    merged = with_skills_check(unhealthy, package_origins())
    assert merged["ok"] is False
    assert merged["remediation_map"] == {"folders": "pm init"}
    assert merged["checks"][-1]["ok"] is True
