"""``pm-mcp`` size limits end to end: the response cap and bad limit settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pm_core.tracker.api import Tracker
from tests.support.mcp_client import McpProcess


@pytest.mark.parametrize("profile", ["core", "standard", "full"])
def test_a_result_over_the_response_cap_is_an_error_and_a_narrower_call_works(
    repo: Path, tracker: Tracker, profile: str
) -> None:
    for n in range(30):
        tracker.create({"title": f"Item {n} " + "words " * 20})
    env = {"PM_MCP_MAX_RESPONSE_BYTES": "4000", "PM_MCP_PROFILE": profile}
    with McpProcess(repo, env=env) as server:
        server.initialize()
        wide = server.request("tools/call", {"name": "pm_list", "arguments": {}})["result"]
        assert wide["isError"] is True
        body = wide["structuredContent"]
        assert body["code"] == 64 and "PM_MCP_MAX_RESPONSE_BYTES" in body["error"]
        assert "narrow the request" in body["hint"]
        narrow = server.request(
            "tools/call", {"name": "pm_list", "arguments": {"options": {"limit": 2}}}
        )["result"]
        assert narrow.get("isError") is not True, narrow
        assert len(narrow["structuredContent"]["result"]["items"]) == 2
        assert server.close() == 0


@pytest.mark.parametrize("name", ["PM_MCP_MAX_RESPONSE_BYTES", "PM_MCP_MAX_REQUEST_BYTES"])
@pytest.mark.parametrize("value", ["lots", "-1"])
def test_a_bad_size_limit_stops_start_up_with_exit_64_and_one_line(
    repo: Path, name: str, value: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pm_core.mcp.main"],
        cwd=repo,
        env={**os.environ, name: value},
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 64, done.stderr
    assert done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert lines == [f"pm-mcp: {name} must be a positive number of bytes, got {value!r}"]
