"""The ``pm://workspace/`` resource provider."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pm_core.contracts import (
    ProtocolError,
    ResourceContent,
    ResourceEntry,
    ResourceProvider,
    ServeContext,
)
from pm_core.tracker.api import Tracker
from pm_core.tracker.model.errors import PmError

PREFIX = "pm://workspace/"
JSON = "application/json"
MARKDOWN = "text/markdown"
#: MCP's "resource not found" error code.
#: Resource not found: -32602 since SEP-2164 (-32002 is retired and never reused).
RESOURCE_NOT_FOUND = -32602
#: JSON-RPC internal error: the tracker could not answer (no tracker, corrupt file).
INTERNAL_ERROR = -32603
#: The agent guide is cut here so one read cannot flood a client's context.
GUIDE_LIMIT = 32_000
GUIDE_FILE = "AGENTS.md"
CONTEXT_LIMIT = 10
CLAIMS_LIMIT = 20


def _context(tracker: Tracker) -> Any:
    from pm_core.tracker.query.ranking import context

    return context(tracker, limit=CONTEXT_LIMIT)


def _focus(tracker: Tracker) -> Any:
    from pm_core.tracker.ops.focus import get_focus

    return get_focus(tracker)


def _claims(tracker: Tracker) -> Any:
    from pm_core.tracker.query.listing import list_items

    result = list_items(tracker, status="in_progress", limit=CLAIMS_LIMIT)
    # The live leases (remote mode: fetched now, or the last fetch with
    # ``fetched_at`` and ``fetch_error`` when the remote cannot be reached).
    result["leases"] = tracker.claims(fallback=True)
    return result


#: name -> (description, JSON reader).
_JSON_RESOURCES: Mapping[str, tuple[str, Callable[[Tracker], Any]]] = {
    "context": ("Ranked working context (top 10): what matters now.", _context),
    "focus": ("The session's focus item, if one is set.", _focus),
    "claims": (
        "Items in progress (up to 20) and the live claim leases, with when they were fetched.",
        _claims,
    ),
}


def guide_text(repo: Path, limit: int = GUIDE_LIMIT) -> str:
    """The repository's ``AGENTS.md``, at most ``limit`` characters with a note when cut.

    When there is no guide the text says so and how to add one, so an agent
    reading it knows the absence is real and not an error.
    """
    path = repo / GUIDE_FILE
    try:
        # A committed symlink must not serve a file from outside the
        # repository, and a FIFO or device would block or stream forever.
        real = path.resolve()
        if not real.is_relative_to(repo.resolve()):
            return f"{GUIDE_FILE} points outside the repository, so it is not served."
        if path.exists() and not real.is_file():
            return f"{GUIDE_FILE} is not a regular file, so it is not served."
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return (
            f"This repository has no {GUIDE_FILE} at its root, so there is no agent guide "
            f"to show. Add {GUIDE_FILE} to the repository root to describe how agents "
            "should work here."
        )
    except OSError as exc:
        return f"{GUIDE_FILE} exists but cannot be read: {exc.strerror or exc}."
    except RuntimeError:  # pathlib's report of a symlink loop
        return f"{GUIDE_FILE} is a symbolic link loop, so it is not served."
    if len(text) <= limit:
        return text
    note = (
        f"\n\n[{GUIDE_FILE} truncated: showing the first {{shown:,}} of {len(text):,} "
        f"characters; open {GUIDE_FILE} in the repository for the rest.]\n"
    )
    room = limit - len(note.format(shown=limit))
    cut = text.rfind("\n", 0, room)
    # Cut at a line end when one is near, so the last line shown is whole.
    shown = cut if cut > room - 2_000 else room
    return text[:shown] + note.format(shown=shown)


def _list(ctx: ServeContext) -> list[ResourceEntry]:
    entries = [
        ResourceEntry(uri=PREFIX + name, name=name, mime_type=JSON, description=description)
        for name, (description, _) in _JSON_RESOURCES.items()
    ]
    entries.append(
        ResourceEntry(
            uri=PREFIX + "agent-guide",
            name="agent-guide",
            mime_type=MARKDOWN,
            description=f"The repository's {GUIDE_FILE} (up to {GUIDE_LIMIT:,} characters).",
        )
    )
    return entries


def _read(ctx: ServeContext, uri: str) -> ResourceContent:
    name = uri.removeprefix(PREFIX)
    if name == "agent-guide":
        repo = ctx.tracker.root.parent.parent
        return ResourceContent(uri=uri, mime_type=MARKDOWN, text=guide_text(repo))
    entry = _JSON_RESOURCES.get(name)
    if entry is None:
        known = ", ".join([*(PREFIX + n for n in _JSON_RESOURCES), PREFIX + "agent-guide"])
        raise ProtocolError(
            RESOURCE_NOT_FOUND, f"resource not found: {uri} (known: {known})", {"uri": uri}
        )
    try:
        value = entry[1](ctx.tracker)
    except PmError as exc:
        raise ProtocolError(
            INTERNAL_ERROR, f"cannot read {uri}: {exc.message}", exc.to_json()
        ) from None
    return ResourceContent(
        uri=uri, mime_type=JSON, text=json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    )


def provider() -> ResourceProvider:
    """The provider of every ``pm://workspace/`` resource (always listed)."""
    return ResourceProvider(prefix=PREFIX, list=_list, read=_read)
