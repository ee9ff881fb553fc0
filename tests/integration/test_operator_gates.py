"""The operator's gates over real transports: stdio and Streamable HTTP, both eras.

Each gate (tool annotations, read-only mode, the deny list, the command
execution switch) is checked through a real ``pm-mcp`` process, once per
transport and protocol era. A canary file stands for "a process ran".
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pm_core.capabilities import builtin_commands
from pm_core.tracker.api import Tracker
from tests.support.mcp_client import McpProcess
from tests.support.mcp_http import HttpServer, legacy_request, legacy_session, modern_request

WIRES = ["stdio-initialize", "stdio-modern", "http-initialize", "http-modern"]
#: The extension plugin installed for these tests: one command that starts a process.
PLUGIN = """
import subprocess
from pm_core import hookimpl
from pm_core.contracts import CommandSpec, ParamSpec


def touch(ctx, target):
    subprocess.run(["touch", target], check=True)
    return {"touched": target}


@hookimpl
def pm_register_commands():
    return [CommandSpec(name="touch-file", summary="Create a file.", tier="full",
                        params=(ParamSpec("target", required=True),), handler=touch)]
"""


class Wire:
    """One ``pm-mcp`` reached one way: ``call``, ``tools``, ``prompt``, ``prompts``."""

    def __init__(self, kind: str, repo: Path, env: Mapping[str, str], args: tuple[str, ...]):
        self.transport, self.era = kind.split("-")
        self.stdio: McpProcess | None = None
        self.http: HttpServer | None = None
        if self.transport == "stdio":
            self.stdio = McpProcess(repo, env=env, args=args)
            if self.era == "initialize":
                self.stdio.initialize()
        else:
            self.http = HttpServer(repo, env=env, args=("--http", "127.0.0.1:0", *args))
            self.client = httpx2.Client(timeout=30)
            if self.era == "initialize":
                self.session = legacy_session(self.client, self.http.url)

    def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The JSON-RPC response message for one request."""
        if self.stdio is not None:
            if self.era == "modern":
                return self.stdio.modern(method, params)
            return self.stdio.request(method, params)
        assert self.http is not None
        if self.era == "modern":
            reply = modern_request(self.client, self.http.url, method, params)
        else:
            reply = legacy_request(self.client, self.http.url, self.session, method, params)
        message: dict[str, Any] = json.loads(reply.text)
        return message

    def tools(self) -> list[dict[str, Any]]:
        """The listed tools."""
        tools: list[dict[str, Any]] = self.request("tools/list")["result"]["tools"]
        return tools

    def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """A tools/call result (``isError`` results included)."""
        result: dict[str, Any] = self.request(
            "tools/call", {"name": name, "arguments": dict(arguments)}
        )["result"]
        return result

    def refused(self, name: str, arguments: Mapping[str, Any]) -> str:
        """The -32602 protocol error of a call to a tool this server does not serve."""
        reply = self.request("tools/call", {"name": name, "arguments": dict(arguments)})
        assert reply.get("error", {}).get("code") == -32602, reply
        return str(reply["error"]["message"])

    def close(self) -> None:
        """Stop the server."""
        if self.stdio is not None:
            assert self.stdio.close() == 0
        else:
            assert self.http is not None
            self.client.close()
            self.http.close()


@pytest.fixture
def serve(repo: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    """``serve(env, *args)``: a server on this test's wire; closed at the end."""
    opened: list[Wire] = []

    def start(env: Mapping[str, str] | None = None, *args: str) -> Wire:
        wire = Wire(request.param, repo, dict(env or {}), args)
        opened.append(wire)
        return wire

    yield start
    for wire in opened:
        wire.close()


def error_text(result: Mapping[str, Any]) -> str:
    """An ``isError`` result's error message (asserts it is one)."""
    assert result.get("isError") is True, result
    return str(result["structuredContent"]["error"])


# ------------------------------------------------------------------ annotations


@pytest.mark.parametrize("serve", WIRES, indirect=True)
@pytest.mark.parametrize("profile", ["core", "standard", "full"])
def test_every_tool_in_every_profile_carries_its_commands_annotations(
    serve: Any, profile: str
) -> None:
    effects = {c.name: c for c in builtin_commands()}
    tools = serve({"PM_MCP_PROFILE": profile}).tools()
    assert tools
    for tool in tools:
        notes = tool.get("annotations")
        assert notes is not None, tool["name"]
        assert set(notes) >= {
            "title",
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }, tool["name"]
        assert tool["title"] == notes["title"] and notes["title"], tool["name"]
        command = effects[tool["name"].removeprefix("pm_")]
        assert command.effects is not None
        assert notes["readOnlyHint"] is command.effects.read_only_hint, tool["name"]
        assert notes["destructiveHint"] is command.effects.destructive, tool["name"]
        assert notes["idempotentHint"] is command.effects.idempotent, tool["name"]
        assert notes["openWorldHint"] is command.effects.open_world, tool["name"]
    by_name = {t["name"]: t["annotations"] for t in tools}
    assert by_name["pm_get"]["readOnlyHint"] is True
    # pm_next claims when asked (claim: true), so a host should treat it as a write.
    assert by_name["pm_next"]["readOnlyHint"] is False and by_name["pm_next"]["openWorldHint"]
    assert by_name["pm_close"]["destructiveHint"] is True
    if profile != "core":
        assert by_name["pm_test"]["openWorldHint"] is True
        assert by_name["pm_test"]["readOnlyHint"] is False
        assert by_name["pm_schema"]["destructiveHint"] is True


# ------------------------------------------------------------------ read-only mode


@pytest.mark.parametrize("serve", WIRES, indirect=True)
@pytest.mark.parametrize("switch", ["flag", "env"])
def test_read_only_mode_lists_and_serves_only_read_tools(
    serve: Any, tracker: Tracker, switch: str
) -> None:
    item = tracker.create({"title": "Readable"})["id"]
    env = {"PM_MCP_PROFILE": "full"}
    wire = serve({**env, "PM_MCP_READ_ONLY": "1"}) if switch == "env" else serve(env, "--read-only")
    tools = wire.tools()
    names = {t["name"] for t in tools}
    assert {"pm_get", "pm_list", "pm_search", "pm_context"} <= names
    # pm_next included: served as the read it is here, its claim refused.
    assert "pm_next" in names and all(t["annotations"]["readOnlyHint"] is True for t in tools)
    assert not names & {"pm_create", "pm_update", "pm_close", "pm_test", "pm_run", "pm_mutate"}
    assert wire.call("pm_get", {"id": item})["structuredContent"]["result"]["item"]["id"] == item
    refused = wire.refused("pm_update", {"id": item, "options": {"title": "Changed"}})
    assert "read-only mode" in refused
    assert tracker.get(item).title == "Readable"
    # pm_next stays (it reads), but its claim option writes: refused, nothing claimed.
    claimed = error_text(wire.call("pm_next", {"options": {"claim": True}}))
    assert "read-only mode" in claimed
    assert tracker.claims(fetch=False)["leases"] == []
    prompt = wire.request("prompts/get", {"name": "claim-and-start", "arguments": {"id": item}})
    text = prompt["result"]["messages"][0]["content"]["text"]
    assert text.startswith("Note: this server runs in read-only mode")
    listed = {
        p["name"]: p["description"] for p in wire.request("prompts/list")["result"]["prompts"]
    }
    assert "read-only mode" in listed["record-evidence-and-close"]
    assert "read-only mode" not in listed["orient"]


# ------------------------------------------------------------------ deny list


@pytest.mark.parametrize("serve", WIRES, indirect=True)
def test_denied_tools_are_gone_after_the_profile_and_pm_run_cannot_reach_them(
    serve: Any, tracker: Tracker
) -> None:
    item = tracker.create({"title": "Denied"})["id"]
    wire = serve({"PM_MCP_PROFILE": "full", "PM_MCP_DENY": "pm_get, pm_comments"})
    names = {t["name"] for t in wire.tools()}
    assert "pm_get" not in names and "pm_comments" not in names and "pm_list" in names
    assert "PM_MCP_DENY" in wire.refused("pm_get", {"id": item})
    via_run = wire.call("pm_run", {"action": "comments", "id": item, "add": "sneaky"})
    assert "'comments' is withheld by the operator" in error_text(via_run)
    assert tracker.get(item).comments == []


@pytest.mark.parametrize("serve", WIRES, indirect=True)
def test_deny_applies_to_a_custom_profile_too(serve: Any) -> None:
    wire = serve(
        {"PM_MCP_PROFILE": "custom", "PM_MCP_TOOLS": "pm_get,pm_list", "PM_MCP_DENY": "pm_get"}
    )
    assert [t["name"] for t in wire.tools()] == ["pm_list"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"PM_MCP_DENY": "pm_get,pm_bogus"}, "pm_bogus"),
        ({"PM_MCP_READ_ONLY": "maybe"}, "PM_MCP_READ_ONLY"),
        ({"PM_MCP_ALLOW_COMMANDS": "sure"}, "PM_MCP_ALLOW_COMMANDS"),
    ],
)
def test_bad_operator_settings_exit_64_at_start_up(
    repo: Path, transport: str, env: dict[str, str], named: str
) -> None:
    args = ["--http", "127.0.0.1:0"] if transport == "http" else []
    done = subprocess.run(
        [sys.executable, "-m", "pm_core.mcp.main", *args],
        cwd=repo,
        env={**_clean_env(), **env},
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 64, done.stderr
    assert done.stdout == b""
    message = done.stderr.decode()
    assert named in message and message.startswith("pm-mcp: "), message


def _clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PM_MCP_") and k != "PM_PATH"}


# ------------------------------------------------------------------ command execution


@pytest.mark.parametrize("serve", WIRES, indirect=True)
def test_commands_are_off_by_default_running_and_linking_are_refused_with_the_fix(
    serve: Any, tracker: Tracker, repo: Path
) -> None:
    item = tracker.create({"title": "Tested"})["id"]
    canary = repo.parent / "canary-default"
    tracker.test_add(item, f"touch {canary}")  # linked and approved on this clone
    wire = serve({"PM_MCP_PROFILE": "full"})
    for name, args in [
        ("pm_test", {"id": item, "run": True}),
        ("pm_run", {"action": "test", "id": item, "run": True}),
        ("pm_run", {"action": "test-all", "ids": [item]}),
        ("pm_test", {"id": item, "add": f"touch {canary}-2"}),
        ("pm_update", {"id": item, "options": {"tests": [{"command": f"touch {canary}-3"}]}}),
    ]:
        message = error_text(wire.call(name, args))
        assert "command execution through pm-mcp is off" in message, (name, message)
        result = wire.call(name, args)["structuredContent"]
        assert "PM_MCP_ALLOW_COMMANDS=1" in result["hint"], result
    assert not list(repo.parent.glob("canary-default*"))
    assert [t["command"] for t in tracker.get(item).tests] == [f"touch {canary}"]
    listed = wire.call("pm_test", {"id": item})["structuredContent"]["result"]
    assert listed["tests"][0]["approved"] is True  # listing is still a read


@pytest.mark.parametrize("serve", WIRES, indirect=True)
def test_switched_on_commands_linked_here_run_and_pulled_ones_wait_for_approval(
    serve: Any, tracker: Tracker, repo: Path
) -> None:
    item = tracker.create({"title": "Tested"})["id"]
    canary = repo.parent / "canary-on"
    wire = serve({"PM_MCP_PROFILE": "standard", "PM_MCP_ALLOW_COMMANDS": "1"})
    assert not wire.call("pm_test", {"id": item, "add": f"touch {canary}"}).get("isError")
    ran = wire.call("pm_test", {"id": item, "run": True})["structuredContent"]["result"]
    assert ran["summary"] == {"passed": 1, "failed": 0} and canary.exists()
    canary.unlink()
    full = serve({"PM_MCP_PROFILE": "full", "PM_MCP_ALLOW_COMMANDS": "1"})
    every = full.call("pm_run", {"action": "test-all", "ids": [item]})["structuredContent"]
    assert every["result"]["summary"]["passed"] == 1 and canary.exists(), every
    # A command set as a field, not linked with `pm test --add`: nobody here approved it.
    other = tracker.create({"title": "Pulled"})["id"]
    stranger = repo.parent / "canary-stranger"
    tracker.update(other, {"tests": [{"command": f"touch {stranger}", "scope": "project"}]})
    refused = wire.call("pm_test", {"id": other, "run": True})
    assert "not approved on this clone" in error_text(refused)
    assert "--approve" in refused["structuredContent"]["hint"]
    assert not stranger.exists()


@pytest.fixture
def gate_plugin(tmp_path: Path) -> dict[str, str]:
    """An installed extension plugin (a real dist-info on PYTHONPATH) whose command spawns."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "gate_plugin.py").write_text(PLUGIN)
    info = site / "gate_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gate-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pm.plugins]\ngate = gate_plugin\n")
    import os

    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "PM_MCP_PROFILE": "full", "PM_PLUGINS_STRICT": "1"}


@pytest.mark.parametrize("serve", WIRES, indirect=True)
def test_an_extension_action_cannot_start_a_process_with_commands_off(
    serve: Any, repo: Path, gate_plugin: dict[str, str]
) -> None:
    canary = repo.parent / "canary-extension"
    wire = serve(gate_plugin)
    refused = wire.call("pm_run", {"action": "touch-file", "target": str(canary)})
    assert "command execution through pm-mcp is off" in error_text(refused)
    assert not canary.exists()
    on = serve({**gate_plugin, "PM_MCP_ALLOW_COMMANDS": "1"})
    done = on.call("pm_run", {"action": "touch-file", "target": str(canary)})
    assert not done.get("isError"), done
    assert canary.exists()
