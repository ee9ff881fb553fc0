"""The stdio fast start: ``initialize`` and the first ``tools/list`` before the SDK loads.

Importing the MCP SDK costs most of ``pm-mcp``'s start-up (its generated
``mcp_types`` models alone take longer than the rest of pm). A client's first
two requests need none of it: the ``initialize`` answer is fixed by the server,
and ``tools/list`` is pm's own catalog. So the stdio path answers those two
here, by hand, then imports the SDK and hands the stream over, replaying what
it read (``initialize`` and ``tools/list`` under private ids whose answers the
transport drops) so the SDK session ends in the state it would have reached.

A plain 2026-07-28 ``tools/list`` as the first message is answered the same
way (that era has no handshake). Only plain, well-formed messages take this
path; anything else (a cursor, an unknown capability or envelope key) is
replayed to the SDK untouched, so behaviour stays the SDK's. The answers are
the bytes the SDK path writes: key order follows the SDK's per-version result models (fields
alphabetical, extra schema keys after the declared ones), and
``tests/integration/test_mcp_fast_start.py`` compares both paths byte for byte.
``PM_MCP_FAST_START=0`` turns it off.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from pm_core import __version__
from pm_core.contracts import RequestContext
from pm_core.host import Host
from pm_core.mcp.config import (
    HANDSHAKE_VERSIONS,
    MODERN_VERSIONS,
    ServerConfig,
    instructions_for,
    profile_tools,
    skills_mode,
)
from pm_core.mcp.results import output_schema
from pm_core.mcp.stdio import StdioPipes
from pm_core.tracker.api import Tracker

#: Ids the replayed requests carry; their SDK answers are dropped.
REPLAY_INITIALIZE = "pm-fast-start/initialize"
REPLAY_TOOLS_LIST = "pm-fast-start/tools-list"
#: Client capabilities whose shape this path checks; any other sends the
#: handshake to the SDK, which validates it.
_DICT_CAPABILITIES = ("experimental", "extensions")
_EMPTY_CAPABILITIES = ("sampling", "elicitation")
#: Declared fields of the SDK's tool schema models, in their wire order, per era.
_SCHEMA_FIELDS = {
    "initialize": ("$schema", "properties", "required", "type"),
    "modern": ("$schema", "type"),
}
#: The 2026-07-28 request envelope keys under ``params._meta``.
_META = "io.modelcontextprotocol/"
#: The SDK's default cache hint for ``tools/list`` (2026-07-28 results).
_LIST_CACHE = {"cacheScope": "private", "ttlMs": 0}

Replay = list[tuple[bytes, bool]]


def enabled(env: Mapping[str, str]) -> bool:
    """Whether ``PM_MCP_FAST_START`` leaves the fast start on (default on)."""
    return env.get("PM_MCP_FAST_START", "").strip().lower() not in ("0", "false", "no", "off")


def _dump(body: Mapping[str, Any]) -> bytes:
    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _request_id(rid: Any) -> bool:
    return (isinstance(rid, int) and not isinstance(rid, bool)) or isinstance(rid, str)


def _message(line: bytes, method: str) -> dict[str, Any] | None:
    """``line`` as a plain JSON-RPC message calling ``method``, else None."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return None
    if value.get("method") != method or not set(value) <= {"jsonrpc", "id", "method", "params"}:
        return None
    return value


def _capabilities_plain(caps: Any) -> bool:
    if not isinstance(caps, dict):
        return False
    for key, value in caps.items():
        if key in _DICT_CAPABILITIES:
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, dict) for k, v in value.items()
            ):
                return False
        elif key in _EMPTY_CAPABILITIES:
            if value != {}:
                return False
        elif key == "roots":
            if not isinstance(value, dict) or not set(value) <= {"listChanged"}:
                return False
            if "listChanged" in value and not isinstance(value["listChanged"], bool):
                return False
        else:
            return False
    return True


def _initialize(line: bytes) -> dict[str, Any] | None:
    """A plain ``initialize`` request of a handshake version this path knows."""
    message = _message(line, "initialize")
    if message is None or not _request_id(message.get("id")):
        return None
    params = message.get("params")
    if not isinstance(params, dict) or set(params) != {
        "protocolVersion",
        "capabilities",
        "clientInfo",
    }:
        return None
    if (
        params["protocolVersion"] not in HANDSHAKE_VERSIONS
        or not _capabilities_plain(params["capabilities"])
        or not _client_info_plain(params["clientInfo"])
    ):
        return None
    return message


def _client_info_plain(info: Any) -> bool:
    return (
        isinstance(info, dict)
        and set(info) <= {"name", "version", "title"}
        and all(isinstance(info.get(k), str) for k in ("name", "version"))
        and isinstance(info.get("title", ""), str)
    )


def _modern_listing(line: bytes) -> dict[str, Any] | None:
    """A plain 2026-07-28 ``tools/list`` (no cursor, the three envelope keys)."""
    message = _message(line, "tools/list")
    if message is None or not _request_id(message.get("id")):
        return None
    params = message.get("params")
    if not isinstance(params, dict) or set(params) != {"_meta"}:
        return None
    meta = params["_meta"]
    keys = {f"{_META}protocolVersion", f"{_META}clientCapabilities", f"{_META}clientInfo"}
    if not isinstance(meta, dict) or set(meta) != keys:
        return None
    if (
        meta[f"{_META}protocolVersion"] not in MODERN_VERSIONS
        or not _capabilities_plain(meta[f"{_META}clientCapabilities"])
        or not _client_info_plain(meta[f"{_META}clientInfo"])
    ):
        return None
    return message


def _schema(schema: Mapping[str, Any], era: str) -> dict[str, Any]:
    """A tool schema in the SDK model's key order: declared fields, then the rest."""
    fields = _SCHEMA_FIELDS[era]
    out = {k: schema[k] for k in fields if schema.get(k) is not None}
    out.update((k, v) for k, v in schema.items() if k not in fields)
    return out


class FastStart:
    """Answers the handshake and the first ``tools/list`` of one stdio connection."""

    def __init__(self, host: Host, config: ServerConfig, pipes: StdioPipes) -> None:
        self.host = host
        self.config = config
        self.pipes = pipes

    def initialize_result(self, version: str) -> dict[str, Any]:
        """What the SDK path answers ``initialize`` with."""
        caps: dict[str, Any] = {
            "prompts": {"listChanged": False},
            "resources": {"listChanged": False, "subscribe": True},
            "tools": {"listChanged": True},
        }
        extensions = {e.identifier: dict(e.settings) for e in self.host.protocol_extensions()}
        if extensions:
            caps["extensions"] = json.loads(json.dumps(extensions))
        return {
            "capabilities": caps,
            "instructions": instructions_for(profile_tools(self.host, self.config)),
            "protocolVersion": version,
            "serverInfo": {"name": "pm-mcp", "version": __version__},
        }

    def tools(self, request: RequestContext) -> list[dict[str, Any]]:
        """The listed tools as the SDK path writes them for ``request``."""
        tracker = Tracker(self.config.root, author=self.config.author, env=self.config.env)
        catalog = self.host.catalog(tracker.schema.contracts(), request=request)
        selected = self.config.operator.select(self.host.select_tools(catalog, request, "list"))
        tools = []
        for tool in self.host.decorate_tools(selected, request):
            wire: dict[str, Any] = {}
            if tool.meta:
                wire["_meta"] = dict(tool.meta)
            effects = tool.effects
            hints = {
                "destructiveHint": effects.destructive,
                "idempotentHint": effects.idempotent,
                "openWorldHint": effects.open_world,
                "readOnlyHint": effects.read_only_hint,
                "title": tool.title or None,
            }
            wire["annotations"] = {k: v for k, v in hints.items() if v is not None}
            if tool.description is not None:
                wire["description"] = tool.description
            wire["inputSchema"] = _schema(tool.input_schema, request.era)
            wire["name"] = tool.name
            schema = output_schema(tool.name, tool.output_schema)
            if schema is not None:
                wire["outputSchema"] = _schema(schema, request.era)
            if tool.title:
                wire["title"] = tool.title
            tools.append(wire)
        return tools

    def request(
        self, version: str, capabilities: Mapping[str, Any], info: Mapping[str, Any]
    ) -> RequestContext:
        """The request context the SDK path builds from the same declarations."""
        return RequestContext(
            era="modern" if version in MODERN_VERSIONS else "initialize",
            protocol_version=version,
            extensions=dict(capabilities.get("extensions") or {}),
            client_name=info["name"],
            profile=self.config.profile,
            tool_allowlist=self.config.tool_allowlist,
            workspace=self.config.root.parent.parent,
            options={"skills": skills_mode(self.config.env)},
            withheld_commands=self.config.operator.commands_withheld(
                self.host.commands(), {n: t.command for n, t in self.host.tools().items()}
            ),
        )

    def modern_tools_result(self, listing: Mapping[str, Any]) -> dict[str, Any]:
        """What the SDK path answers a plain 2026-07-28 ``tools/list`` with."""
        meta = listing["params"]["_meta"]
        request = self.request(
            meta[f"{_META}protocolVersion"],
            meta[f"{_META}clientCapabilities"],
            meta[f"{_META}clientInfo"],
        )
        return {
            "cacheScope": _LIST_CACHE["cacheScope"],
            "resultType": "complete",
            "tools": self.tools(request),
            "ttlMs": _LIST_CACHE["ttlMs"],
            "_meta": {f"{_META}serverInfo": {"name": "pm-mcp", "version": __version__}},
        }

    def run(self) -> Replay:
        """Serve what it can; the lines the SDK must see next, in order."""
        lines: Iterator[tuple[bytes, bool]] = self.pipes.lines
        first = next(lines, None)
        if first is None:
            return []
        init = None if first[1] else _initialize(first[0])
        if init is None:
            modern = None if first[1] else _modern_listing(first[0])
            if modern is None:
                return [first]
            try:
                result = self.modern_tools_result(modern)
            except Exception:  # the SDK path answers it, error and all
                return [first]
            self.pipes.wire.write(_dump({"jsonrpc": "2.0", "id": modern["id"], "result": result}))
            return [(_dump({**modern, "id": REPLAY_TOOLS_LIST}), False)]
        params = init["params"]
        version = params["protocolVersion"]
        answer = {"jsonrpc": "2.0", "id": init["id"], "result": self.initialize_result(version)}
        self.pipes.wire.write(_dump(answer))
        replay: Replay = [(_dump({**init, "id": REPLAY_INITIALIZE}), False)]
        while (item := next(lines, None)) is not None:
            line, too_long = item
            if not too_long and not line.strip():
                continue
            if not too_long and _message(line, "notifications/initialized") == {
                "jsonrpc": "2.0",
                "method": "notifications/initialized",
            }:
                replay.append(item)
                continue
            listing = None if too_long else _message(line, "tools/list")
            if (
                listing is None
                or not _request_id(listing.get("id"))
                or listing.get("params", {}) != {}
            ):
                replay.append(item)
                break
            try:
                request = self.request(version, params["capabilities"], params["clientInfo"])
                result = {"tools": self.tools(request)}
            except Exception:  # the SDK path answers it, error and all
                replay.append(item)
                break
            self.pipes.wire.write(_dump({"jsonrpc": "2.0", "id": listing["id"], "result": result}))
            replay.append((_dump({**listing, "id": REPLAY_TOOLS_LIST}), False))
            break
        return replay
