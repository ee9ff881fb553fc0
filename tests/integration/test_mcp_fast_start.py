"""The stdio fast start answers exactly what the SDK path answers, and hands over.

Each case runs ``pm-mcp`` twice on the same workspace, with the fast start and
with ``PM_MCP_FAST_START=0`` (every message through the SDK), and compares the
``initialize`` and ``tools/list`` answer lines byte for byte; a tools/call after
them checks the SDK took over the session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pm_core.mcp.config import HANDSHAKE_VERSIONS
from tests.support.mcp_client import MODERN

APPS = "io.modelcontextprotocol/ui"
SKILLS = "io.modelcontextprotocol/skills"
DRAFT = "SEP-2640@a3e147ca2710f68214247aecc729731ee1ae8d03"

CAPABILITIES: dict[str, dict[str, Any]] = {
    "none": {},
    "apps": {"extensions": {APPS: {"mimeTypes": ["text/html;profile=mcp-app"]}}},
    "skills-draft": {"extensions": {SKILLS: {"revision": DRAFT}}},
    "skills-final": {"extensions": {SKILLS: {}}, "roots": {"listChanged": True}},
    "skills-wrong": {"extensions": {SKILLS: {"revision": 7, "directoryRead": "x"}}},
    "sdk-like": {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}},
}
PROFILES: dict[str, dict[str, str]] = {
    "core": {},
    "standard": {"PM_MCP_PROFILE": "standard"},
    "full": {"PM_MCP_PROFILE": "full", "PM_MCP_SKILLS": "open"},
    "read-only": {"PM_MCP_PROFILE": "standard", "PM_MCP_READ_ONLY": "1", "PM_MCP_DENY": "pm_get"},
    "custom": {"PM_MCP_PROFILE": "custom", "PM_MCP_TOOLS": "pm_get,pm_search,pm_claim"},
}


def _line(body: dict[str, Any]) -> bytes:
    return (json.dumps(body) + "\n").encode()


def _run(repo: Path, messages: list[dict[str, Any]], env: dict[str, str]) -> list[bytes]:
    full_env = {**os.environ, **env}
    full_env.pop("PM_PATH", None)
    done = subprocess.run(
        [sys.executable, "-m", "pm_core.mcp.main"],
        cwd=repo,
        env=full_env,
        input=b"".join(_line(m) for m in messages),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout.splitlines()


def _handshake(version: str, caps: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": caps,
                "clientInfo": {"name": "fast-start-test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "pm_get", "arguments": {"id": "pm-nope"}},
        },
    ]


def _by_id(lines: list[bytes]) -> dict[Any, bytes]:
    return {json.loads(line).get("id"): line for line in lines}


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("caps", sorted(CAPABILITIES))
def test_handshake_answers_are_the_sdk_bytes(repo: Path, profile: str, caps: str) -> None:
    version = HANDSHAKE_VERSIONS[len(caps) % len(HANDSHAKE_VERSIONS)]
    messages = _handshake(version, CAPABILITIES[caps])
    fast = _by_id(_run(repo, messages, PROFILES[profile]))
    slow = _by_id(_run(repo, messages, {**PROFILES[profile], "PM_MCP_FAST_START": "0"}))
    assert fast[1] == slow[1]
    assert fast[2] == slow[2]
    assert json.loads(fast[2])["result"]["tools"]
    # The SDK served the call after the hand-over, in the negotiated session.
    assert sorted(fast) == sorted(slow) == [1, 2, 3]
    assert json.loads(fast[3]) == json.loads(slow[3])


def _modern(rid: int, method: str, caps: dict[str, Any], **params: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": meta}}


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("caps", sorted(CAPABILITIES))
def test_modern_tools_list_is_the_sdk_bytes(repo: Path, profile: str, caps: str) -> None:
    messages = [
        _modern(7, "tools/list", CAPABILITIES[caps]),
        _modern(8, "tools/call", CAPABILITIES[caps], name="pm_get", arguments={"id": "pm-x"}),
    ]
    fast = _by_id(_run(repo, messages, PROFILES[profile]))
    slow = _by_id(_run(repo, messages, {**PROFILES[profile], "PM_MCP_FAST_START": "0"}))
    assert fast[7] == slow[7]
    assert json.loads(fast[7])["result"]["tools"]
    assert sorted(fast) == sorted(slow) == [7, 8]
    assert json.loads(fast[8]) == json.loads(slow[8])


def test_unusual_handshakes_go_to_the_sdk(repo: Path) -> None:
    """An initialize the fast start does not vouch for gets the SDK's own answer."""
    odd = _handshake("2025-06-18", {"roots": {"listChanged": "yes"}})
    old = _handshake("2024-11-05", {})
    bad_modern = [_modern(1, "tools/list", {"sampling": 3})]
    for messages in (odd, old, bad_modern):
        fast = _run(repo, messages, {})
        slow = _run(repo, messages, {"PM_MCP_FAST_START": "0"})
        assert _by_id(fast)[1] == _by_id(slow)[1]


SCRIPT = """
import os, sys
from pm_core.host import build_host
from pm_core.mcp import fast_start, main
from pm_core.mcp.stdio import StdioPipes
env = dict(os.environ)
config = main.server_config(main.parse_args([]), env)
replay = fast_start.FastStart(build_host(env), config, StdioPipes(1 << 20)).run()
print(len(replay), "mcp" in sys.modules, "mcp_types" in sys.modules, file=sys.stderr)
"""


@pytest.mark.parametrize("era", ["initialize", "modern"])
@pytest.mark.parametrize("caps", sorted(CAPABILITIES))
def test_the_fast_start_answers_without_importing_the_sdk(repo: Path, caps: str, era: str) -> None:
    if era == "modern":
        messages = [_modern(2, "tools/list", CAPABILITIES[caps])]
        expected = ([2], "1")
    else:
        messages = _handshake("2025-11-25", CAPABILITIES[caps])[:3]
        expected = ([1, 2], "3")
    env = {**os.environ}
    env.pop("PM_PATH", None)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=repo,
        env=env,
        input=b"".join(_line(m) for m in messages),
        capture_output=True,
        timeout=120,
        check=True,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == expected[0]
    assert answers[-1]["result"]["tools"]
    # What the SDK must replay (initialize, initialized, tools/list), and no SDK import.
    assert done.stderr.decode().split()[-3:] == [expected[1], "False", "False"]
