"""Prompts and server instructions name only tools the client's profile can call.

A real ``pm-mcp`` process per profile (and per custom allowlist): every
``pm_*`` name in the ``initialize`` instructions and in every rendered prompt
is among the tools ``tools/list`` returns.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.mcp_client import McpProcess, tool_names

_TOOL = re.compile(r"\bpm_[a-z_]+\b")
_ARGS = {
    "orient": {"request": "fix the login bug"},
    "claim-and-start": {"id": "pm-a1b2"},
    "record-evidence-and-close": {"id": "pm-a1b2", "evidence": "tests pass"},
}

PROFILES = [
    ("core", None),
    ("standard", None),
    ("full", None),
    ("custom", "pm_get,pm_close"),
    ("custom", "pm_context,pm_claim,pm_notes,pm_comments"),
    ("custom", "pm_search"),
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pm_core.tracker.api import Tracker

    folder = tmp_path_factory.mktemp("prompts")
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    Tracker(folder / ".agents" / "pm", env={}).init(None)
    return folder


@pytest.mark.parametrize(("profile", "allowlist"), PROFILES)
def test_prompts_and_instructions_name_only_callable_tools(
    repo: Path, profile: str, allowlist: str | None
) -> None:
    env = {"PM_MCP_PROFILE": profile, "PM_LOAD_PLUGINS": ""}
    if allowlist:
        env["PM_MCP_TOOLS"] = allowlist
    with McpProcess(repo, env=env) as server:
        init = server.initialize()
        listed = set(tool_names(server.request("tools/list")["result"]))
        named = set(_TOOL.findall(init.get("instructions") or ""))
        assert named <= listed, (profile, allowlist, named - listed)
        prompts = server.request("prompts/list")["result"]["prompts"]
        assert {p["name"] for p in prompts} >= set(_ARGS)
        for name, args in _ARGS.items():
            reply = server.request("prompts/get", {"name": name, "arguments": args})
            text = reply["result"]["messages"][0]["content"]["text"]
            stray = set(_TOOL.findall(text)) - listed
            assert not stray, (profile, allowlist, name, stray)
            assert re.search(r"^1\. ", text, re.M), text  # still a usable list of steps
