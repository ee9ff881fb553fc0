"""Change notifications to an initialize-era session, with the official SDK client.

Over stdio and Streamable HTTP: ``notifications/tools/list_changed`` after a
schema change (``pm schema add type`` from a CLI process), and
``notifications/resources/updated`` for subscribed ``pm://workspace/*`` and
``pm://items/{id}`` URIs when claims, focus or that item change. Changes come
from other processes (the ``pm`` CLI), since the files are the truth.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from tests.support.mcp_http import HttpServer

pytestmark = pytest.mark.anyio
WAIT = 20.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pm(repo: Path, *args: str) -> dict[str, Any]:
    import json

    done = subprocess.run(
        [sys.executable, "-m", "pm_core.cli.main", *args, "--json"],
        cwd=repo,
        env={**os.environ, "PM_AUTHOR": "cli"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout) if done.stdout.strip() else {}


class Inbox:
    """Notifications the client received, waited for by method and URI."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None]] = []
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if isinstance(method, str):
            params = getattr(message, "params", None)
            uri = getattr(params, "uri", None)
            self.seen.append((method, str(uri) if uri is not None else None))
            self.event.set()

    async def wait_for(self, method: str, uri: str | None = None) -> None:
        with anyio.fail_after(WAIT):
            while (method, uri) not in self.seen:
                self.event = anyio.Event()
                await self.event.wait()


@asynccontextmanager
async def connect(repo: Path, transport: str, inbox: Inbox) -> AsyncIterator[Client]:
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "pm_core.mcp.main"], cwd=str(repo), env={}
        )
        async with Client(params, mode="legacy", message_handler=inbox) as client:
            yield client
        return
    server = HttpServer(repo)
    try:
        async with Client(server.url, mode="legacy", message_handler=inbox) as client:
            yield client
    finally:
        server.close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_sessions_hear_of_changes(repo: Path, transport: str) -> None:
    created = pm(repo, "create", "--title", "Watched", "--type", "Task")
    item_id = created.get("id") or created["item"]["id"]
    inbox = Inbox()
    async with connect(repo, transport, inbox) as client:
        caps = client.server_capabilities
        assert caps.tools is not None and caps.tools.list_changed is True
        assert caps.resources is not None and caps.resources.subscribe is True
        await client.list_tools()
        for uri in ("pm://workspace/claims", "pm://workspace/focus", f"pm://items/{item_id}"):
            await client.subscribe_resource(uri)
        with pytest.raises(MCPError) as caught:
            await client.subscribe_resource("pm://nowhere/else")
        assert caught.value.error.code == -32602

        await anyio.to_thread.run_sync(lambda: pm(repo, "claim", item_id))
        await inbox.wait_for("notifications/resources/updated", "pm://workspace/claims")
        await inbox.wait_for("notifications/resources/updated", f"pm://items/{item_id}")

        await anyio.to_thread.run_sync(lambda: pm(repo, "focus", item_id))
        await inbox.wait_for("notifications/resources/updated", "pm://workspace/focus")

        await anyio.to_thread.run_sync(lambda: pm(repo, "schema", "add", "type", "Spike"))
        await inbox.wait_for("notifications/tools/list_changed")

        await client.unsubscribe_resource(f"pm://items/{item_id}")
        await anyio.sleep(1.5)  # anything already on its way arrives first
        before = inbox.seen.count(("notifications/resources/updated", f"pm://items/{item_id}"))
        await anyio.to_thread.run_sync(lambda: pm(repo, "release", item_id))
        await inbox.wait_for("notifications/resources/updated", "pm://workspace/claims")
        await anyio.sleep(1.5)
        after = inbox.seen.count(("notifications/resources/updated", f"pm://items/{item_id}"))
        assert after == before
