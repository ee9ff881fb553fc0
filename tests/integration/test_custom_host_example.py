"""``examples/custom_host.py`` hosts pm from ``pm_core.sdk`` alone: tools, skills, a view."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pm_core.sdk import render_app_html

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "custom_host.py"
PACKAGE_SKILLS = {"pm-developer", "pm-extensions", "pm-sdk", "pm-user"}


def _skill(root: Path, folder: str, name: str) -> None:
    path = root / ".agents" / "skills" / folder
    path.mkdir(parents=True)
    (path / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Notes the team keeps for agents.\n---\n\n# Notes\n",
        encoding="utf-8",
    )


@pytest.fixture
def workspace(repo: Path) -> Path:
    """A repository with a tracker, one valid workspace skill and one the loader refuses."""
    _skill(repo, "team-notes", "team-notes")
    _skill(repo, "misnamed", "not-the-folder-name")
    return repo


def _run(workspace: Path, *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    # Built-ins only, so an extension installed in the developer's environment
    # cannot change the tool list under test.
    env = {**os.environ, "PM_LOAD_PLUGINS": ""}
    env.pop("PM_PATH", None)
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run(
        [sys.executable, *flags, str(SCRIPT), "--path", str(workspace), *args],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _report(workspace: Path, *args: str) -> dict[str, Any]:
    done = _run(workspace, "--json", *args)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_script_imports_nothing_from_pm_but_the_public_sdk() -> None:
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    ours = {m for m in modules if m.split(".")[0] in ("pm_core", "plugins")}
    assert ours == {"pm_core.sdk"}


def test_core_profile_tools_carry_tier_family_and_their_app_view(workspace: Path) -> None:
    tools = {t["name"]: t for t in _report(workspace)["tools"]}
    assert {"pm_get", "pm_context", "pm_claim"} <= set(tools)
    assert {t["tier"] for t in tools.values()} == {"core"}
    assert "pm_comments" not in tools and "pm_run" not in tools
    assert tools["pm_context"]["view"] == "context" and tools["pm_get"]["view"] is None


def test_custom_profile_lists_exactly_its_allowlist(workspace: Path) -> None:
    report = _report(workspace, "--profile", "custom", "--tools", "pm_get,pm_comments")
    assert [t["name"] for t in report["tools"]] == ["pm_comments", "pm_get"]


def test_skills_come_from_the_package_and_the_workspace_with_refusals_named(
    workspace: Path,
) -> None:
    report = _report(workspace)
    names = {s["name"] for s in report["skills"]}
    assert names == PACKAGE_SKILLS | {"team-notes"}
    assert all(s["bytes"] > 0 and s["uri"].startswith("skill://") for s in report["skills"])
    assert [r["name"] for r in report["refused_skills"]] == ["misnamed"]


def test_view_written_is_the_sdk_rendering(workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.html"
    report = _report(workspace, "--view", "plan", "--out", str(out))
    assert out.read_text(encoding="utf-8") == render_app_html("plan")
    assert report["view"]["bytes"] == len(out.read_bytes())


def test_bad_profile_and_bad_view_exit_2_naming_the_problem(workspace: Path) -> None:
    bad_profile = _run(workspace, "--profile", "nope")
    assert bad_profile.returncode == 2 and "unknown MCP tool profile 'nope'" in bad_profile.stderr
    bad_view = _run(workspace, "--view", "nope")
    assert bad_view.returncode == 2 and "unknown MCP Apps view 'nope'" in bad_view.stderr


def test_script_never_imports_the_mcp_server(workspace: Path) -> None:
    done = _run(workspace, "--json", importtime=True)
    assert done.returncode == 0
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "pm_core.sdk" in imported
    assert not any(name.startswith("pm_core.mcp") for name in imported)
