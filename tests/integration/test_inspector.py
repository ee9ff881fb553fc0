"""The MCP Inspector CLI, unchanged, against ``pm-mcp`` over stdio and Streamable HTTP.

Both eras (``--protocol-era legacy`` and ``modern``), under each profile: ``tools/list --strict``
reports no schema portability finding, a tool call answers, resources,
templates and prompts list, and ``skills/list --verify`` verifies every skill
file's digest and size.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.inspector import ensure_inspector
from tests.support.mcp_http import HttpServer


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    return ensure_inspector()


@pytest.fixture(params=["core", "standard", "full"])
def profile(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, repo: Path, profile: str) -> Iterator[list[str]]:
    if request.param == "stdio":
        # env(1) sets the profile whatever environment the Inspector gives its child.
        server = [sys.executable, "-m", "pm_core.mcp.main"]
        yield ["--cwd", str(repo), "env", f"PM_MCP_PROFILE={profile}", *server]
        return
    server = HttpServer(repo, env={"PM_MCP_PROFILE": profile})
    try:
        yield [server.url]
    finally:
        server.close()


def run(inspector: list[str], target: list[str], era: str, *args: str) -> tuple[Any, str]:
    done = subprocess.run(
        [*inspector, "--protocol-era", era, *args, *target],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, (args, done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    return done.stdout, done.stderr


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_cli_on_both_transports(
    inspector: list[str], target: list[str], era: str, profile: str
) -> None:
    out, err = run(inspector, target, era, "--method", "tools/list", "--strict")
    tools = json.loads(out)["tools"]
    assert tools and all("outputSchema" in t for t in tools)
    names = {t["name"] for t in tools}  # the profile's (pm_comments: standard; pm_copy: full)
    assert ("pm_comments" in names) == (profile != "core") and ("pm_copy" in names) == (
        profile == "full"
    )
    assert "portability" not in err.lower(), err
    assert "schemaFindings" not in out

    out, _ = run(inspector, target, era, "--method", "tools/call", "--tool-name", "pm_list")
    called = json.loads(out)
    assert not called.get("isError") and "items" in called["structuredContent"]["result"]

    out, _ = run(inspector, target, era, "--method", "resources/list")
    assert "pm://workspace/context" in {r["uri"] for r in json.loads(out)["resources"]}
    out, _ = run(inspector, target, era, "--method", "resources/templates/list")
    assert "pm://items/{id}" in {t["uriTemplate"] for t in json.loads(out)["resourceTemplates"]}
    out, _ = run(inspector, target, era, "--method", "prompts/list")
    assert "orient" in {p["name"] for p in json.loads(out)["prompts"]}

    out, err = run(inspector, target, era, "--method", "skills/list", "--verify")
    reports = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert len(reports) >= 4
    for report in reports:
        assert report["conformance"] == [], report
        assert report["files"] and all(f["status"] == "verified" for f in report["files"])
