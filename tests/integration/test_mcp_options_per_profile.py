"""Every CLI option reaches its tool, at every profile, through the real MCP client.

``core`` and ``standard`` list compact schemas; an option left out of the
listing is still accepted and honoured there (no "may be ignored" warning),
so an agent that learnt it from ``pm_contracts`` can pass it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from pm_core.host import build_host
from pm_core.mcp.server import PmMcp, ServerConfig

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _call(client: Client, name: str, args: dict[str, Any]) -> tuple[Any, list[str]]:
    result = await client.call_tool(name, args)
    assert not result.is_error, result.structured_content
    content = result.structured_content or {}
    return content.get("result"), list(content.get("warnings") or [])


@pytest.mark.parametrize("profile", ["core", "standard", "full"])
async def test_create_search_claim_close_honour_every_option(repo: Path, profile: str) -> None:
    app = PmMcp(
        build_host({"PM_LOAD_PLUGINS": ""}),
        ServerConfig(root=repo / ".agents" / "pm", profile=profile, env={}),
    )
    async with Client(app.server, mode="legacy") as client:  # type: ignore[arg-type]
        listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        task, warnings = await _call(
            client,
            "pm_create",
            {"options": {"title": "Parser crash", "type": "Task", "risk": "high", "message": "m"}},
        )
        assert warnings == []
        issue, _ = await _call(
            client, "pm_create", {"options": {"title": "Parser crash study", "type": "Issue"}}
        )
        hits, warnings = await _call(client, "pm_search", {"query": "parser", "type": ["Task"]})
        assert warnings == []
        assert [h["id"] for h in hits["hits"]] == [task["id"]]
        claimed, warnings = await _call(client, "pm_claim", {"id": task["id"], "ifAvailable": True})
        assert warnings == [] and claimed["status"] == "in_progress"
        closed, warnings = await _call(
            client,
            "pm_close",
            {
                "id": issue["id"],
                "reason": "not needed",
                "canceled": True,
                "completedAt": "2026-01-02T03:04:05Z",
            },
        )
        assert warnings == [], warnings
        assert closed["status"] == "canceled"
        item, _ = await _call(client, "pm_get", {"id": issue["id"], "fields": "completed_at"})
        assert item["item"]["completed_at"].startswith("2026-01-02T03:04:05")
        risky, _ = await _call(client, "pm_get", {"id": task["id"]})
        assert risky["item"]["risk"] == "high"
    compact = profile != "full"
    assert ("completedAt" not in listed["pm_close"]["properties"]) == compact
