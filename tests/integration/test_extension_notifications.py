"""An extension installed, disabled, enabled or removed while ``pm-mcp`` runs changes its tools.

With the official SDK client, over stdio and Streamable HTTP: the server's
import path has a folder where a distribution with a ``pm.plugins`` entry
point appears (as an installer leaves it: the module, then its
``.dist-info``), and later goes away; in between the workspace disables and
re-enables it with ``pm config set extensions.disabled``. Each change sends
``notifications/tools/list_changed``, and ``tools/list`` then shows (or no
longer shows) the extension's tool.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.support.mcp_http import HttpServer

pytestmark = pytest.mark.anyio
WAIT = 20.0
TOOL = "pm_hello_ext"
LIST_CHANGED = "notifications/tools/list_changed"

MODULE = """
from pm_core import hookimpl
from pm_core.contracts import CommandSpec, ToolSpec


def _say(ctx):
    return {"hello": "world"}


def _schema(_contracts):
    return {"type": "object", "properties": {}}


def _handle(ctx, args):
    return {"hello": "world"}


@hookimpl
def pm_register_commands():
    return [CommandSpec(name="hello-ext", summary="Say hello.", tier="core", handler=_say)]


@hookimpl
def pm_register_tools():
    return [ToolSpec("pm_hello_ext", "Say hello.", "hello-ext", _schema, _handle)]
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def install(site: Path) -> None:
    """Put the distribution on the import path as an installer would: module, then metadata."""
    staging = site.parent / "staging"
    staging.mkdir(exist_ok=True)
    (staging / "pm_hello_ext.py").write_text(MODULE, encoding="utf-8")
    info = staging / "pm_hello_ext-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pm-hello-ext\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[pm.plugins]\nhello_ext = pm_hello_ext\n", encoding="utf-8"
    )
    os.rename(staging / "pm_hello_ext.py", site / "pm_hello_ext.py")
    os.rename(info, site / info.name)


def uninstall(site: Path) -> None:
    """Remove the distribution's metadata, then its module."""
    gone = site.parent / "removed"
    os.rename(site / "pm_hello_ext-1.0.dist-info", gone)
    shutil.rmtree(gone)
    (site / "pm_hello_ext.py").unlink()


def pm(repo: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pm_core.cli.main", *args],
        cwd=repo,
        env={k: v for k, v in os.environ.items() if k != "PM_PATH"},
        capture_output=True,
        text=True,
        check=True,
    )


class Inbox:
    """How many tool-list notifications arrived, waited for one at a time."""

    def __init__(self) -> None:
        self.count = 0
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if getattr(message, "method", None) == LIST_CHANGED:
            self.count += 1
            self.event.set()

    async def wait_past(self, count: int) -> None:
        with anyio.fail_after(WAIT):
            while self.count <= count:
                self.event = anyio.Event()
                await self.event.wait()


@asynccontextmanager
async def connect(repo: Path, site: Path, transport: str, inbox: Inbox) -> AsyncIterator[Client]:
    env = {"PYTHONPATH": str(site), "PM_LOAD_PLUGINS": "hello_ext"}
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "pm_core.mcp.main"], cwd=str(repo), env=env
        )
        async with Client(params, mode="legacy", message_handler=inbox) as client:
            yield client
        return
    server = HttpServer(repo, env=env)
    try:
        async with Client(server.url, mode="legacy", message_handler=inbox) as client:
            yield client
    finally:
        server.close()


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_installing_disabling_and_removing_an_extension_announces_the_tool_list(
    repo: Path, tmp_path: Path, transport: str
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    inbox = Inbox()
    async with connect(repo, site, transport, inbox) as client:
        assert TOOL not in await tool_names(client)  # the session now hears of changes

        seen = inbox.count
        await anyio.to_thread.run_sync(install, site)
        await inbox.wait_past(seen)
        assert TOOL in await tool_names(client)
        called = await client.call_tool(TOOL, {})
        assert called.is_error is False
        assert called.structured_content == {"result": {"hello": "world"}}

        seen = inbox.count
        await anyio.to_thread.run_sync(
            lambda: pm(repo, "config", "set", "extensions.disabled", "hello_ext")
        )
        await inbox.wait_past(seen)
        assert TOOL not in await tool_names(client)

        seen = inbox.count
        await anyio.to_thread.run_sync(
            lambda: pm(repo, "config", "set", "extensions.disabled", "[]")
        )
        await inbox.wait_past(seen)
        assert TOOL in await tool_names(client)

        seen = inbox.count
        await anyio.to_thread.run_sync(uninstall, site)
        await inbox.wait_past(seen)
        assert TOOL not in await tool_names(client)
