"""pm-mcp in process with the real SDK client: both eras, and fault handling with
fake plugins registered on a fresh host."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

from pm_core import hookimpl
from pm_core.contracts import CommandSpec, ToolContext, ToolSpec
from pm_core.host import build_host
from pm_core.mcp.server import PmMcp, ServerConfig

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class ExplodingTools:
    """A plugin whose tool raises an unexpected exception with secret text."""

    @hookimpl
    def pm_register_tools(self) -> Sequence[ToolSpec]:
        def boom(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
            raise RuntimeError("secret internal detail /etc/shadow")

        return [
            ToolSpec(
                name="pm_explode",
                description="Always fails.",
                command="explode",
                input_schema=lambda contracts: {"type": "object", "properties": {}},
                handler=boom,
            )
        ]

    @hookimpl
    def pm_register_commands(self) -> Sequence[CommandSpec]:
        return [CommandSpec(name="explode", summary="Fails.", tier="core", family="extensions")]


def make_app(repo: Path, plugins: list[tuple[str, object]] | None = None) -> PmMcp:
    host = build_host({}, plugins=plugins or [])
    return PmMcp(host, ServerConfig(root=repo / ".agents" / "pm", env={}))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_unexpected_exception_is_internal_error_without_details(
    repo: Path, mode: str
) -> None:
    app = make_app(repo, [("exploding", ExplodingTools())])
    async with Client(app.server, mode=mode) as client:  # type: ignore[arg-type]
        with pytest.raises(MCPError) as caught:
            await client.call_tool("pm_explode", {})
    assert caught.value.error.code == -32603
    assert "secret" not in caught.value.error.message
    assert "shadow" not in str(caught.value.error.data or "")


async def test_sdk_client_sees_the_same_tools_in_both_eras(repo: Path) -> None:
    app = make_app(repo)
    names = []
    for mode in ("legacy", "auto"):
        async with Client(app.server, mode=mode) as client:  # type: ignore[arg-type]
            listed = await client.list_tools()
            names.append(sorted(t.name for t in listed.tools))
    assert names[0] == names[1]
    assert "pm_get" in names[0]


async def test_tool_failure_is_an_error_result_with_the_exit_code(repo: Path) -> None:
    app = make_app(repo)
    async with Client(app.server, mode="legacy") as client:  # type: ignore[arg-type]
        result = await client.call_tool("pm_get", {"id": "pm-zzzz"})
    assert result.is_error
    assert result.structured_content is not None
    assert result.structured_content["code"] == 3
    assert result.structured_content["result"] is None
    assert "pm-zzzz" in result.structured_content["error"]
