"""The Final Skills text (ext-skills ``specification/stable/skills.mdx``) on a real ``pm-mcp``.

Final clients declare the extension without ``revision`` (``{}`` or
``{"directoryRead": true}``), or declare nothing when the operator set
``PM_MCP_SKILLS=open``. Draft clients, on the same server, keep the draft.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_client import McpProcess
from tests.support.skills_wire import (
    NEGOTIATED,
    REQUIRED,
    SKILLS_EXTENSION_ID,
    content_bytes,
    failed,
    init_repo,
    ok,
    sha256,
)

PREFIX = "io.modelcontextprotocol.skills/"
FINAL_EMPTY = {SKILLS_EXTENSION_ID: {}}
FINAL_DIRECTORY = {SKILLS_EXTENSION_ID: {"directoryRead": True}}
SKILL = "skill://pm-user/SKILL.md"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_repo(tmp_path_factory.mktemp("final") / "repo")


@pytest.fixture(scope="module")
def server(repo: Path) -> Iterator[McpProcess]:
    with McpProcess(repo) as process:
        yield process


@pytest.fixture(scope="module")
def open_server(repo: Path) -> Iterator[McpProcess]:
    with McpProcess(repo, env={"PM_MCP_SKILLS": "open"}) as process:
        yield process


def _meta_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = list(value["_meta"]) if isinstance(value.get("_meta"), dict) else []
        return own + [k for v in value.values() for k in _meta_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _meta_keys(v)]
    return []


def _final_walk(call: Any) -> None:
    """List, get, read and directory-read one skill as a Final host does, checking each."""
    listed = ok(call("skills/list", {}))
    assert listed["resultType"] == "complete"
    assert listed["ttlMs"] > 0 and listed["cacheScope"] == "private"
    entry = next(s for s in listed["skills"] if s["uri"] == SKILL)
    got = ok(call("skills/get", {"uri": SKILL}))
    assert got["skill"]["resources"] == entry["resources"]
    assert got["ttlMs"] > 0 and got["cacheScope"] == "private"
    manifest = {r["uri"]: r for r in entry["resources"]}
    read = ok(call("resources/read", {"uri": SKILL}))["contents"][0]
    data = content_bytes(read)
    assert sha256(data) == manifest[SKILL]["digest"] and len(data) == manifest[SKILL]["size"]
    directory = ok(call("resources/directory/read", {"uri": "skill://pm-user"}))
    assert {r["uri"] for r in directory["resources"]} >= {SKILL}
    keys = _meta_keys([listed["skills"], got["skill"], read, directory["resources"]])
    assert keys and all(k.startswith(PREFIX) for k in keys), keys
    unknown = failed(call("skills/get", {"uri": "skill://nope/SKILL.md"}), -32602)
    assert "skill://nope/SKILL.md" in unknown["message"]
    failed(call("resources/read", {"uri": "skill://pm-user/none.md"}), -32602)
    resources = ok(call("resources/list", {}))["resources"]
    assert SKILL in {r["uri"] for r in resources}


@pytest.mark.parametrize("declared", [FINAL_EMPTY, FINAL_DIRECTORY], ids=["empty", "directoryRead"])
def test_modern_final_declaration_is_served_the_final_text(
    server: McpProcess, declared: dict[str, Any]
) -> None:
    _final_walk(lambda method, params: server.modern(method, params, extensions=declared))


def test_initialize_era_final_declaration_is_served(repo: Path) -> None:
    with McpProcess(repo) as process:
        process.initialize(extensions=FINAL_EMPTY)
        listed = ok(process.request("skills/list"))
        assert "ttlMs" not in listed  # no cache hints before 2026-07-28
        keys = _meta_keys(listed["skills"])
        assert keys and all(k.startswith(PREFIX) for k in keys)
        read = ok(process.request("resources/read", {"uri": SKILL}))
        assert read["contents"][0]["text"].startswith("---")


def test_undeclared_client_is_refused_unless_the_operator_opens_skills(
    server: McpProcess, open_server: McpProcess
) -> None:
    assert failed(server.modern("skills/list", {}), -32021)["data"] == REQUIRED
    _final_walk(lambda method, params: open_server.modern(method, params))


def test_open_setting_keeps_the_draft_for_draft_clients(open_server: McpProcess) -> None:
    got = ok(open_server.modern("skills/get", {"uri": SKILL}, extensions=NEGOTIATED))
    meta = got["skill"]["_meta"]
    assert meta["trust"] == "untrusted" and meta["compatibility"]["status"] == "draft"
    wrong = {SKILLS_EXTENSION_ID: {"revision": "SEP-2640@a3e147c"}}
    assert failed(open_server.modern("skills/list", {}, extensions=wrong), -32021)


def test_an_invalid_skills_setting_stops_start_up(repo: Path) -> None:
    with McpProcess(repo, env={"PM_MCP_SKILLS": "sometimes"}) as process:
        assert process.proc.wait(timeout=30) == 64
        time.sleep(0.2)  # the stderr pump thread drains the pipe
        stderr = b"".join(process.stderr_lines).decode()
        assert "PM_MCP_SKILLS must be one of negotiated, open" in stderr
