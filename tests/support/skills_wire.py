"""Helpers for the skills tests that speak raw JSON-RPC to a real ``pm-mcp``.

The declarations here are what a client puts under
``capabilities.extensions`` -- at ``initialize`` or, in the 2026-07-28 era,
in every request's ``_meta``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pm_core.tracker.api import Tracker
from tests.support.mcp_client import McpProcess

#: Spelled out rather than imported, so a drifting constant fails the tests.
SKILLS_EXTENSION_ID = "io.modelcontextprotocol/skills"
SKILLS_REVISION = "SEP-2640@a3e147ca2710f68214247aecc729731ee1ae8d03"
#: What ``initialize`` and ``server/discover`` must advertise, byte for byte.
ADVERTISED: dict[str, Any] = {"revision": SKILLS_REVISION, "status": "draft", "directoryRead": True}
#: The -32021 data every refused skills request must carry.
REQUIRED: dict[str, Any] = {
    "requiredCapabilities": {"extensions": {SKILLS_EXTENSION_ID: ADVERTISED}}
}


def declaration(revision: Any = SKILLS_REVISION, directory_read: Any = True) -> dict[str, Any]:
    """A client's ``extensions`` object declaring the skills extension.

    A setting given as None is left out of the declaration.
    """
    settings: dict[str, Any] = {}
    if revision is not None:
        settings["revision"] = revision
    if directory_read is not None:
        settings["directoryRead"] = directory_read
    return {SKILLS_EXTENSION_ID: settings}


#: The declaration a conforming client sends.
NEGOTIATED = declaration()


def init_repo(root: Path) -> Path:
    """A git repository at ``root`` with an initialised tracker; returns ``root``."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    Tracker(root / ".agents" / "pm", author="tester", env={}).init()
    return root


def ok(reply: Mapping[str, Any]) -> dict[str, Any]:
    """The result of a reply that must have succeeded."""
    assert "result" in reply, reply
    result: dict[str, Any] = reply["result"]
    return result


def failed(reply: Mapping[str, Any], *codes: int) -> dict[str, Any]:
    """The error of a reply that must have failed with one of ``codes``."""
    assert "result" not in reply, reply
    assert reply.get("error", {}).get("code") in codes, reply
    error: dict[str, Any] = reply["error"]
    return error


def content_bytes(content: Mapping[str, Any]) -> bytes:
    """The exact bytes a wire ``resources/read`` content carries."""
    if "text" in content:
        text: str = content["text"]
        return text.encode("utf-8")
    return base64.b64decode(content["blob"], validate=True)


def sha256(data: bytes) -> str:
    """The draft's digest format: ``sha256:`` and 64 lowercase hex digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def walk(
    server: McpProcess, limit: int, extensions: Mapping[str, Any] = NEGOTIATED
) -> list[list[dict[str, Any]]]:
    """Every page of ``skills/list`` at ``limit``, following ``nextCursor`` to the end."""
    pages: list[list[dict[str, Any]]] = []
    params: dict[str, Any] = {"limit": limit}
    for _ in range(1000):
        page = ok(server.modern("skills/list", params, extensions=extensions))
        pages.append(page["skills"])
        if "nextCursor" not in page:
            return pages
        params = {"limit": limit, "cursor": page["nextCursor"]}
    raise AssertionError("skills/list pagination never ended")


def stderr_events(server: McpProcess) -> list[dict[str, Any]]:
    """The JSON log lines ``pm-mcp`` wrote to stderr so far."""
    events: list[dict[str, Any]] = []
    for line in list(server.stderr_lines):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            events.append(value)
    return events


def wait_for_events(
    server: McpProcess,
    done: Callable[[list[dict[str, Any]]], bool],
    timeout: float = 10.0,
) -> list[dict[str, Any]]:
    """Stderr events once ``done`` holds for them (stderr is pumped by a thread)."""
    deadline = time.monotonic() + timeout
    events = stderr_events(server)
    while not done(events) and time.monotonic() < deadline:
        time.sleep(0.05)
        events = stderr_events(server)
    return events
