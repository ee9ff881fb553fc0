"""Progressive discovery through a real ``pm-mcp`` on stdio.

Negotiated, unnegotiated and initialize-era clients on the same binary: the
entry catalog, pointer results, error results and ``pm_discover`` itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from tests.support.mcp_client import McpProcess

PTD = "dev.unbrained.pm/progressive-tool-discovery"
ENTRY = ["pm_discover", "pm_next", "pm_context", "pm_search", "pm_get"]
DECLARED: dict[str, Any] = {PTD: {}}


def names(reply: dict[str, Any]) -> list[str]:
    return [t["name"] for t in reply["result"]["tools"]]


def test_modern_clients_opt_in_per_request(repo: Path) -> None:
    with McpProcess(repo) as server:
        discover = server.modern("server/discover")["result"]
        assert discover["capabilities"]["extensions"][PTD]["entryCatalog"] == ENTRY
        negotiated = server.modern("tools/list", extensions=DECLARED)
        assert names(negotiated) == ENTRY
        wire = json.dumps(negotiated["result"]["tools"], separators=(",", ":"))
        assert math.ceil(len(wire.encode("utf-8")) / 4) < 1500
        # The next request does not declare it: the full core profile again.
        assert len(names(server.modern("tools/list"))) == 14


def test_initialize_era_clients_keep_the_full_profile(repo: Path) -> None:
    with McpProcess(repo) as server:
        result = server.initialize(extensions=DECLARED)
        assert PTD in result["capabilities"]["extensions"]
        listed = names(server.request("tools/list"))
        assert len(listed) == 14 and "pm_close" in listed
        call = server.request("tools/call", {"name": "pm_discover", "arguments": {"limit": 2}})
        content = call["result"]
        assert json.loads(content["content"][0]["text"]) == content["structuredContent"]["result"]


def test_negotiated_results_point_to_structured_content(repo: Path) -> None:
    with McpProcess(repo) as server:
        reply = server.modern(
            "tools/call",
            {"name": "pm_discover", "arguments": {"query": "close an item with evidence"}},
            extensions=DECLARED,
        )["result"]
        assert not reply.get("isError")
        result = reply["structuredContent"]["result"]
        assert "pm_close" in [row["name"] for row in result["tools"][:3]]
        assert "structuredContent.result" in reply["content"][0]["text"]
        assert "pm_close" not in reply["content"][0]["text"]
        plain = server.modern(
            "tools/call", {"name": "pm_discover", "arguments": {"query": "close an item"}}
        )["result"]
        assert json.loads(plain["content"][0]["text"]) == plain["structuredContent"]["result"]


def test_negotiated_clients_can_still_call_tools_outside_the_entry_catalog(repo: Path) -> None:
    with McpProcess(repo) as server:
        reply = server.modern(
            "tools/call", {"name": "pm_list", "arguments": {}}, extensions=DECLARED
        )["result"]
        assert not reply.get("isError"), reply


def test_bad_discovery_input_is_a_usage_error_result(repo: Path) -> None:
    with McpProcess(repo) as server:
        reply = server.modern(
            "tools/call",
            {"name": "pm_discover", "arguments": {"limit": 500}},
            extensions=DECLARED,
        )["result"]
        assert reply["isError"] is True
        structured = reply["structuredContent"]
        assert structured["code"] == 64 and structured["details"]["field"] == "limit"
        assert "structuredContent.result" in reply["content"][0]["text"]
        stale = server.modern(
            "tools/call",
            {"name": "pm_discover", "arguments": {"cursor": "AQAAAAEAAAAAAAAAAAAAAAAAAAAA"}},
        )["result"]
        assert (
            stale["isError"] is True and "without a cursor" in stale["structuredContent"]["error"]
        )
