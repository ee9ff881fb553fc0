"""The ``pm://items/`` resource templates: one item, and one item's history.

``pm://items/{id}`` reads what ``pm_get`` returns (``{"item": record}``);
``pm://items/{id}/history`` the item's newest history entries. Neither is
listed in ``resources/list`` (a tracker can hold thousands of items): hosts
find them through ``resources/templates/list``. Like ``pm_get``, a read is
bounded by ``PM_MCP_MAX_RESPONSE_BYTES``: a larger body is refused with a
message saying how to narrow it, never cut.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from pm_core.contracts import (
    ProtocolError,
    ResourceContent,
    ResourceEntry,
    ResourceProvider,
    ResourceTemplateEntry,
    ServeContext,
)
from pm_core.tracker.model.errors import NotFoundError, PmError, UsageError

PREFIX: Final = "pm://items/"
JSON: Final = "application/json"
#: Resource not found and bad parameters: -32602 (SEP-2164).
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
#: History entries served, newest last; older ones are counted, not sent.
HISTORY_LIMIT: Final = 100
DEFAULT_MAX_BYTES: Final = 4 * 1024 * 1024

TEMPLATES: Final = (
    ResourceTemplateEntry(
        uri_template=PREFIX + "{id}",
        name="item",
        mime_type=JSON,
        description="One item in full, as pm_get returns it ({item}).",
    ),
    ResourceTemplateEntry(
        uri_template=PREFIX + "{id}/history",
        name="item-history",
        mime_type=JSON,
        description=(
            f"One item's history, oldest first: the newest {HISTORY_LIMIT} entries "
            "({id, entries, count, total})."
        ),
    ),
)


def max_bytes(env: Mapping[str, str]) -> int:
    """``PM_MCP_MAX_RESPONSE_BYTES`` (checked at server start-up), else 4 MiB."""
    raw = env.get("PM_MCP_MAX_RESPONSE_BYTES", "").strip()
    try:
        value = int(raw) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        value = DEFAULT_MAX_BYTES
    return value if value > 0 else DEFAULT_MAX_BYTES


def parse(uri: str) -> tuple[str, str]:
    """``(id, "item" | "history")`` of a ``pm://items/`` URI; -32602 otherwise."""
    rest = uri.removeprefix(PREFIX)
    kind = "item"
    if rest.endswith("/history"):
        rest, kind = rest.removesuffix("/history"), "history"
    if not rest or "/" in rest or any(c.isspace() for c in rest):
        raise ProtocolError(
            INVALID_PARAMS,
            f"resource not found: {uri} (use {PREFIX}{{id}} or {PREFIX}{{id}}/history)",
            {"uri": uri, "field": "uri"},
        )
    return rest, kind


def _body(ctx: ServeContext, item_id: str, kind: str) -> dict[str, Any]:
    tracker = ctx.tracker
    if kind == "item":
        return {"item": tracker.get(item_id).to_record()}
    entries = tracker.history(item_id)
    shown = entries[-HISTORY_LIMIT:]
    return {
        "id": tracker.normalize_id(item_id),
        "entries": [e.to_json() for e in shown],
        "count": len(shown),
        "total": len(entries),
    }


def read(ctx: ServeContext, uri: str) -> ResourceContent:
    """One item or its history, bounded like ``pm_get``."""
    item_id, kind = parse(uri)
    try:
        body = _body(ctx, item_id, kind)
    except NotFoundError as exc:
        raise ProtocolError(
            INVALID_PARAMS, f"resource not found: {uri} ({exc.message})", {"uri": uri}
        ) from None
    except PmError as exc:
        code = INVALID_PARAMS if isinstance(exc, UsageError) else INTERNAL_ERROR
        raise ProtocolError(code, f"cannot read {uri}: {exc.message}", exc.to_json()) from None
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=str)
    limit = max_bytes(ctx.tracker.env)
    size = len(text.encode("utf-8"))
    if size > limit:
        raise ProtocolError(
            INVALID_PARAMS,
            f"{uri} is {size} bytes, over the {limit}-byte response cap "
            "(PM_MCP_MAX_RESPONSE_BYTES); call pm_get with fields to read part of it",
            {"uri": uri, "bytes": size, "limit": limit},
        )
    return ResourceContent(uri=uri, mime_type=JSON, text=text)


def _list(_ctx: ServeContext) -> list[ResourceEntry]:
    return []


def provider() -> ResourceProvider:
    """The ``pm://items/`` templates (always offered, like ``pm://workspace/``)."""
    return ResourceProvider(prefix=PREFIX, list=_list, read=read, templates=TEMPLATES)
