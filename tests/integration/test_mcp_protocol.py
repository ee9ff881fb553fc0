"""pm-mcp over stdio, speaking raw JSON-RPC lines: both protocol eras on one binary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.mcp_client import MODERN, McpProcess

SKILLS = "io.modelcontextprotocol/skills"


def test_initialize_era_advertises_extensions(repo: Path) -> None:
    with McpProcess(repo) as server:
        result = server.initialize()
        assert result["protocolVersion"] == "2025-11-25"
        assert result["serverInfo"]["name"] == "pm-mcp"
        extensions = result["capabilities"]["extensions"]
        assert SKILLS in extensions
        assert extensions[SKILLS]["revision"].startswith("SEP-2640@a3e147c")


def test_initialize_keeps_an_offered_older_version(repo: Path) -> None:
    with McpProcess(repo) as server:
        assert server.initialize(version="2025-06-18")["protocolVersion"] == "2025-06-18"


def test_modern_discover_lists_versions_and_extensions(repo: Path) -> None:
    with McpProcess(repo) as server:
        reply = server.modern("server/discover")
        result = reply["result"]
        assert MODERN in result["supportedVersions"]
        assert "2025-11-25" in result["supportedVersions"]
        assert SKILLS in result["capabilities"]["extensions"]


def test_modern_unsupported_version_is_32022_with_supported_list(repo: Path) -> None:
    with McpProcess(repo) as server:
        reply = server.modern("tools/list", version="2099-01-01")
        assert reply["error"]["code"] == -32022
        assert MODERN in reply["error"]["data"]["supported"]


def test_modern_request_missing_capabilities_is_32602(repo: Path) -> None:
    with McpProcess(repo) as server:
        server.modern("server/discover")  # opens a modern connection
        rid = server.send(
            "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}
        )
        reply = server.response(rid)
        assert reply["error"]["code"] == -32602
        assert "clientCapabilities" in reply["error"]["message"]


def test_garbage_lines_get_errors_and_serving_continues(repo: Path) -> None:
    with McpProcess(repo) as server:
        server.initialize()
        server.send_raw("this is not json {")
        assert server.read_message()["error"]["code"] == -32700
        server.send_raw(json.dumps({"jsonrpc": "2.0", "id": 77, "params": 3}))
        reply = server.read_message()
        assert reply["error"]["code"] == -32600
        assert reply["id"] == 77
        server.send_raw(json.dumps([1, 2, 3]))
        assert server.read_message()["error"]["code"] in (-32600, -32700)
        assert "tools" in server.request("tools/list")["result"]
        assert server.close() == 0


def test_unknown_method_is_32601(repo: Path) -> None:
    with McpProcess(repo) as server:
        server.initialize()
        assert server.request("no/such/method")["error"]["code"] == -32601


def test_end_of_input_answers_pending_requests_and_exits_zero(repo: Path) -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"},
    ]
    data = "".join(json.dumps(m) + "\n" for m in lines)
    done = subprocess.run(
        [sys.executable, "-m", "pm_core.mcp.main"],
        cwd=repo,
        input=data.encode(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(r["id"] for r in replies) == [1, 2, 3]


def test_stdout_carries_only_protocol_messages(repo: Path) -> None:
    with McpProcess(repo) as server:
        server.initialize()
        server.request("tools/list")
        server.request("resources/list")
        server.close()
    # read_message would have failed on any non-JSON line; also stderr holds no JSON-RPC.
    assert all(b'"jsonrpc"' not in line for line in server.stderr_lines)


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"PM_MCP_PROFILE": "everything"}, "everything"),
        ({"PM_MCP_PROFILE": "custom", "PM_MCP_TOOLS": ""}, "PM_MCP_TOOLS"),
        ({"PM_MCP_PROFILE": "custom", "PM_MCP_TOOLS": "pm_get,pm_bogus"}, "pm_bogus"),
    ],
)
def test_bad_profile_configuration_exits_64_with_one_line(
    repo: Path, env: dict[str, str], needle: str
) -> None:
    import os

    full = {**os.environ, **env}
    done = subprocess.run(
        [sys.executable, "-m", "pm_core.mcp.main"],
        cwd=repo,
        env=full,
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 64
    message = done.stderr.decode().strip().splitlines()
    assert len(message) == 1
    assert needle in message[0]
    assert done.stdout == b""


@pytest.mark.parametrize("era", ["initialize", "modern"])
def test_unknown_or_unselected_tool_is_a_32602_protocol_error(repo: Path, era: str) -> None:
    with McpProcess(repo) as server:
        if era == "initialize":
            server.initialize()

        def call(name: str, arguments: dict[str, object]) -> dict[str, object]:
            params = {"name": name, "arguments": arguments}
            if era == "initialize":
                return server.request("tools/call", params)
            return server.modern("tools/call", params)

        unknown = call("pm_nope", {})
        assert unknown["error"]["code"] == -32602, unknown  # type: ignore[index]
        assert "unknown tool pm_nope" in unknown["error"]["message"]  # type: ignore[index]
        hidden = call("pm_schema", {})  # a full-profile tool; the default is core
        assert hidden["error"]["code"] == -32602, hidden  # type: ignore[index]
        assert "not enabled in the core profile" in hidden["error"]["message"]  # type: ignore[index]
        failing = call("pm_get", {"id": "pm-doesnotexist"})  # execution fails: a result
        assert failing["result"]["isError"] is True, failing  # type: ignore[index]
