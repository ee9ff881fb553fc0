"""A seeded workspace and the real ``pm-mcp`` results the view tests render.

The workspace is built with the ``pm`` CLI, as a user would; the results come
from ``pm-mcp`` on stdio, through an initialize-era handshake that declares
the MCP Apps extension, at the profile that lists all five view tools.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.cases import ViewCase
from tests.support.mcp_client import McpProcess

UI = "io.modelcontextprotocol/ui"
DECLARED = {UI: {"specVersion": "2026-01-26", "mimeTypes": ["text/html;profile=mcp-app"]}}
MISSING = "pm-gone"


def _pm_command() -> list[str]:
    script = Path(sys.executable).with_name("pm")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pm_core.cli.main"]


def _pm(root: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PM_AUTHOR": "alice"}
    env.pop("PM_PATH", None)
    done = subprocess.run(
        [*_pm_command(), "--json", *args], cwd=root, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise AssertionError(f"pm {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    value: dict[str, Any] = json.loads(done.stdout)
    return value


def seed(root: Path) -> dict[str, str]:
    """A small tracker with a hierarchy, dependencies, a plan, linked tests and one broken link."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    _pm(root, "init")
    ids: dict[str, str] = {}

    def create(key: str, title: str, *flags: str) -> None:
        ids[key] = _pm(root, "create", title, *flags)["id"]

    create("epic", "Ship interactive MCP Apps views", "--type", "Epic", "-p", "high")
    create("feature", "Views render tool results", "--type", "Feature", "--parent", ids["epic"])
    create(
        "explorer",
        "Write the context explorer",
        "--parent",
        ids["feature"],
        "--status",
        "in_progress",
        "-p",
        "1",
    )
    create(
        "graph", "Draw the relationship graph", "--parent", ids["feature"], "--dep", ids["explorer"]
    )
    create(
        "browser",
        "Test the views in Chromium",
        "--parent",
        ids["feature"],
        "--dep",
        ids["graph"],
        "--dep",
        f"{ids['explorer']}:related",
    )
    # A link to an item that does not exist gives pm_validate a real finding.
    create("dangling", "Link to a removed item", "--dep", MISSING, "--allow-unresolved-deps")
    ids["plan"] = _pm(
        root,
        "plan",
        "create",
        "Release the apps views",
        "--parent",
        ids["epic"],
        "--step",
        "Build the views",
        "--step",
        "Test in a real browser",
        "--step",
        "Publish",
    )["id"]
    _pm(root, "plan", "step", ids["plan"], "1", "done", "--note", "views inline their runtime")
    _pm(
        root, "plan", "decision", ids["plan"], "Views speak the protocol themselves; no SDK bundle."
    )
    _pm(root, "test", ids["browser"], "--add", "python3 -c \"print('views render')\"")
    _pm(
        root,
        "test",
        ids["browser"],
        "--add",
        "python3 -c \"import sys; print('no chromium'); sys.exit(3)\"",
    )
    return ids


def collect_cases(root: Path) -> dict[str, ViewCase]:
    """Seed ``root`` and ask ``pm-mcp`` for a success and a failure of each view tool."""
    ids = seed(root)
    calls: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
        "context": (
            "pm_context",
            {"options": {"depth": "standard"}},
            {"options": {"parent": MISSING}},
        ),
        "graph": (
            "pm_graph",
            {"subcommand": "descendants", "id": ids["epic"]},
            {"subcommand": "descendants", "id": MISSING},
        ),
        "plan": (
            "pm_plan",
            {"subcommand": "show", "id": ids["plan"]},
            {"subcommand": "show", "id": MISSING},
        ),
        "assurance": ("pm_validate", {}, {"options": {"checks": ["bogus"]}}),
        "operations": ("pm_test", {"id": ids["browser"], "run": True}, {"id": MISSING}),
    }
    cases: dict[str, ViewCase] = {}
    # pm_test runs its linked commands: the operator turns command execution on.
    env = {"PM_MCP_PROFILE": "standard", "PM_AUTHOR": "alice", "PM_MCP_ALLOW_COMMANDS": "1"}
    with McpProcess(root, env=env) as server:
        server.initialize(extensions=DECLARED)
        for view, (tool, good, bad) in calls.items():
            result = _call(server, tool, good)
            if result.get("isError"):
                raise AssertionError(f"{tool} {good} failed: {result['content']}")
            error = _call(server, tool, bad)
            if not error.get("isError"):
                raise AssertionError(f"{tool} {bad} was expected to fail: {error['content']}")
            cases[view] = ViewCase(view=view, tool=tool, arguments=good, result=result, error=error)
    return cases


def _call(server: McpProcess, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = server.request("tools/call", {"name": tool, "arguments": arguments})
    if "result" not in reply:
        raise AssertionError(f"tools/call {tool} got a protocol error: {reply}")
    result: dict[str, Any] = reply["result"]
    return result
