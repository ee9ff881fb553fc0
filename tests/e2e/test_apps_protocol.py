"""MCP Apps over the wire: a real ``pm-mcp`` on stdio, initialize-era and 2026-07-28.

Decoration of ``tools/list``, the ``ui://`` resources, the fail-closed read, and
undecorated discovery for clients that did not negotiate Apps.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_client import McpProcess

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
DECLARED = {UI: {"specVersion": "2026-01-26", "mimeTypes": [MIME]}}
VIEWS = {
    "pm_context": "ui://pm/context.html",
    "pm_graph": "ui://pm/graph.html",
    "pm_plan": "ui://pm/plan.html",
    "pm_validate": "ui://pm/assurance.html",
    "pm_test": "ui://pm/operations.html",
}
RESOURCE_META = {
    "ui": {
        "csp": {
            "connectDomains": [],
            "resourceDomains": [],
            "frameDomains": [],
            "baseUriDomains": [],
        },
        "permissions": {},
        "prefersBorder": True,
    }
}


@pytest.fixture
def server(repo: Path) -> Iterator[McpProcess]:
    """``pm-mcp`` on a fresh workspace, at the profile that lists all five view tools."""
    with McpProcess(repo, env={"PM_MCP_PROFILE": "standard"}) as process:
        yield process


def ui_meta(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {t["name"]: (t.get("_meta") or {}).get("ui") for t in tools}


def test_initialize_advertises_apps_support(server: McpProcess) -> None:
    result = server.initialize(extensions=DECLARED)
    assert result["capabilities"]["extensions"][UI] == {
        "specVersion": "2026-01-26",
        "mimeTypes": [MIME],
    }


def test_negotiated_listing_binds_each_view_tool_to_its_view(server: McpProcess) -> None:
    server.initialize(extensions=DECLARED)
    meta = ui_meta(server.request("tools/list")["result"]["tools"])
    for name, uri in VIEWS.items():
        assert meta[name] == {"resourceUri": uri, "visibility": ["model", "app"]}, name
    assert {n for n, m in meta.items() if m is not None} == set(VIEWS)


def test_listing_without_apps_carries_no_ui_meta(server: McpProcess) -> None:
    server.initialize()
    tools = server.request("tools/list")["result"]["tools"]
    assert set(VIEWS) <= {t["name"] for t in tools}
    assert all(m is None for m in ui_meta(tools).values())
    resources = server.request("resources/list")["result"]["resources"]
    assert [r["uri"] for r in resources if r["uri"].startswith("ui://")] == []


def test_declaration_without_the_app_mime_type_is_not_negotiation(server: McpProcess) -> None:
    server.initialize(extensions={UI: {"specVersion": "2026-01-26", "mimeTypes": ["text/html"]}})
    assert all(m is None for m in ui_meta(server.request("tools/list")["result"]["tools"]).values())
    error = server.request("resources/read", {"uri": VIEWS["pm_plan"]})["error"]
    assert error["code"] == -32021


def test_negotiated_resources_list_and_read_serve_the_views(server: McpProcess) -> None:
    server.initialize(extensions=DECLARED)
    listed = {
        r["uri"]: r
        for r in server.request("resources/list")["result"]["resources"]
        if r["uri"].startswith("ui://")
    }
    assert sorted(listed) == sorted(VIEWS.values())
    for uri, entry in listed.items():
        assert entry["mimeType"] == MIME
        assert entry["_meta"] == RESOURCE_META
        (content,) = server.request("resources/read", {"uri": uri})["result"]["contents"]
        assert content["uri"] == uri and content["mimeType"] == MIME
        assert content["_meta"] == RESOURCE_META
        assert content["text"].lower().startswith("<!doctype html>")


def test_read_of_a_view_without_apps_fails_closed(server: McpProcess) -> None:
    server.initialize()
    reply = server.request("resources/read", {"uri": VIEWS["pm_context"]})
    assert "result" not in reply
    error = reply["error"]
    assert error["code"] == -32021
    assert UI in error["message"]
    required = error["data"]["requiredCapabilities"]["extensions"][UI]
    assert MIME in required["mimeTypes"]


def test_read_of_an_unknown_view_is_not_found(server: McpProcess) -> None:
    server.initialize(extensions=DECLARED)
    error = server.request("resources/read", {"uri": "ui://pm/kanban.html"})["error"]
    assert error["code"] == -32602
    assert error["data"] == {"uri": "ui://pm/kanban.html"}


def test_modern_requests_negotiate_apps_one_request_at_a_time(server: McpProcess) -> None:
    with_ui = ui_meta(server.modern("tools/list", extensions=DECLARED)["result"]["tools"])
    without = ui_meta(server.modern("tools/list")["result"]["tools"])
    assert with_ui["pm_validate"] == {
        "resourceUri": VIEWS["pm_validate"],
        "visibility": ["model", "app"],
    }
    assert all(m is None for m in without.values())
    read = server.modern("resources/read", {"uri": VIEWS["pm_graph"]}, extensions=DECLARED)
    assert read["result"]["contents"][0]["mimeType"] == MIME
    denied = server.modern("resources/read", {"uri": VIEWS["pm_graph"]})
    assert denied["error"]["code"] == -32021


def test_core_profile_decorates_only_the_view_tools_it_lists(repo: Path) -> None:
    with McpProcess(repo, env={"PM_MCP_PROFILE": "core"}) as server:
        server.initialize(extensions=DECLARED)
        meta = ui_meta(server.request("tools/list")["result"]["tools"])
    decorated = {n for n, m in meta.items() if m is not None}
    assert decorated == {"pm_context", "pm_plan", "pm_validate"}
    assert "pm_graph" not in meta and "pm_test" not in meta


@pytest.mark.parametrize("tool", ["pm_context", "pm_validate"])
def test_view_tool_results_do_not_depend_on_apps(server: McpProcess, tool: str) -> None:
    plain = server.modern("tools/call", {"name": tool, "arguments": {}})["result"]
    negotiated = server.modern("tools/call", {"name": tool, "arguments": {}}, extensions=DECLARED)[
        "result"
    ]
    assert negotiated == plain
    assert negotiated["content"][0]["text"]
    assert "result" in negotiated["structuredContent"]
