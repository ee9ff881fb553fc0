"""The official Python SDK client, unchanged, against a real ``pm-mcp`` process.

``mcp.Client`` in ``legacy`` (initialize) and ``auto`` (2026-07-28 through
``server/discover``) modes, over stdio (a spawned ``pm-mcp``) and Streamable
HTTP (``pm-mcp --http``), under each profile: the core workflow, with every
structured result validated against the tool's listed ``outputSchema``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client, MCPError, StdioServerParameters

from tests.support.mcp_http import HttpServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def connect(repo: Path, transport: str, mode: str, profile: str) -> AsyncIterator[Client]:
    env = {"PM_MCP_PROFILE": profile}
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "pm_core.mcp.main"], cwd=str(repo), env=env
        )
        async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
            yield client
        return
    server = HttpServer(repo, env=env)
    try:
        async with Client(server.url, mode=mode) as client:  # type: ignore[arg-type]
            yield client
    finally:
        server.close()


async def _call(client: Client, schemas: dict[str, Any], name: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(name, args)
    assert not result.is_error, (name, result.structured_content)
    jsonschema.validate(result.structured_content, schemas[name])
    assert result.structured_content is not None
    value = result.structured_content["result"]
    assert json.loads(result.content[0].text) == value  # type: ignore[union-attr]
    return value


@pytest.mark.parametrize("profile", ["core", "standard", "full"])
@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_core_workflow_with_the_sdk_client(
    repo: Path, transport: str, mode: str, profile: str
) -> None:
    async with connect(repo, transport, mode, profile) as client:
        tools = (await client.list_tools()).tools
        schemas = {t.name: t.output_schema for t in tools}
        assert all(schemas.values()), [n for n, s in schemas.items() if not s]
        # The server serves the profile asked for (pm_comments: standard; pm_copy: full).
        assert ("pm_comments" in schemas) == (profile != "core"), sorted(schemas)
        assert ("pm_copy" in schemas) == (profile == "full"), sorted(schemas)
        created = await _call(
            client, schemas, "pm_create", {"options": {"title": "Via SDK", "type": "Task"}}
        )
        item_id = created["id"]
        await _call(client, schemas, "pm_claim", {"id": item_id})
        await _call(client, schemas, "pm_update", {"id": item_id, "options": {"priority": 1}})
        got = await _call(client, schemas, "pm_get", {"id": item_id})
        assert got["item"]["title"] == "Via SDK"
        listed = await _call(client, schemas, "pm_list", {})
        assert item_id in [i["id"] for i in listed["items"]]
        await _call(client, schemas, "pm_context", {})
        await _call(client, schemas, "pm_close", {"id": item_id, "reason": "done via the SDK"})

        resources = (await client.list_resources()).resources
        assert "pm://workspace/context" in {str(r.uri) for r in resources}
        templates = (await client.list_resource_templates()).resource_templates
        assert "pm://items/{id}" in {t.uri_template for t in templates}
        read = await client.read_resource(f"pm://items/{item_id}")
        assert json.loads(read.contents[0].text)["item"]["id"] == item_id  # type: ignore[union-attr]

        prompts = (await client.list_prompts()).prompts
        assert "orient" in {p.name for p in prompts}
        prompt = await client.get_prompt("orient", {"request": "what next"})
        assert prompt.messages

        with pytest.raises(MCPError) as caught:
            await client.call_tool("pm_not_a_tool", {})
        assert caught.value.error.code == -32602
