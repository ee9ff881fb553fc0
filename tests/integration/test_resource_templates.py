"""``resources/templates/list`` and reads of ``pm://items/{id}`` on a real ``pm-mcp``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pm_core.tracker.api import Tracker
from tests.support.mcp_client import McpProcess


def _call(server: McpProcess, era: str, method: str, params: dict[str, Any] | None = None) -> Any:
    if era == "modern":
        return server.modern(method, params)
    return server.request(method, params)


@pytest.mark.parametrize("profile", ["core", "standard", "full"])
@pytest.mark.parametrize("era", ["initialize", "modern"])
def test_templates_are_listed_and_read(
    repo: Path, tracker: Tracker, era: str, profile: str
) -> None:
    created = tracker.create({"title": "Template target", "body": "the body"})
    item_id = created["item"]["id"] if "item" in created else created["id"]
    tracker.update(item_id, {"priority": 1})
    with McpProcess(repo, env={"PM_MCP_PROFILE": profile}) as server:
        if era == "initialize":
            server.initialize()
        listed = _call(server, era, "resources/templates/list")["result"]
        templates = {t["uriTemplate"]: t for t in listed["resourceTemplates"]}
        assert set(templates) >= {"pm://items/{id}", "pm://items/{id}/history"}
        assert all(t["mimeType"] == "application/json" for t in templates.values())
        if era == "modern":
            assert "ttlMs" in listed and listed["cacheScope"] in ("private", "public")
        read = _call(server, era, "resources/read", {"uri": f"pm://items/{item_id}"})
        (content,) = read["result"]["contents"]
        item = json.loads(content["text"])["item"]
        assert item["id"] == item_id and item["title"] == "Template target"
        got = (
            server.request("tools/call", {"name": "pm_get", "arguments": {"id": item_id}})
            if era == "initialize"
            else server.modern("tools/call", {"name": "pm_get", "arguments": {"id": item_id}})
        )
        assert got["result"]["structuredContent"]["result"]["item"] == item
        history = _call(server, era, "resources/read", {"uri": f"pm://items/{item_id}/history"})
        body = json.loads(history["result"]["contents"][0]["text"])
        assert body["id"] == item_id and body["total"] == body["count"] >= 2
        missing = _call(server, era, "resources/read", {"uri": "pm://items/pm-zzzz"})
        assert (
            missing["error"]["code"] == -32602
            and "pm://items/pm-zzzz" in missing["error"]["message"]
        )
        bad = _call(server, era, "resources/read", {"uri": "pm://items/a/b/c"})
        assert bad["error"]["code"] == -32602


def test_item_reads_are_bounded_like_pm_get(repo: Path, tracker: Tracker) -> None:
    created = tracker.create({"title": "Big", "body": "x" * 5000})
    item_id = created["item"]["id"] if "item" in created else created["id"]
    with McpProcess(repo, env={"PM_MCP_MAX_RESPONSE_BYTES": "2000"}) as server:
        reply = server.modern("resources/read", {"uri": f"pm://items/{item_id}"})
        error = reply["error"]
        assert error["code"] == -32602
        assert "PM_MCP_MAX_RESPONSE_BYTES" in error["message"]
        assert error["data"]["limit"] == 2000
