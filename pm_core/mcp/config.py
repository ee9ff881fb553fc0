"""What ``pm-mcp`` was started with, and the checks run before serving.

Free of the MCP SDK, so the stdio fast start (:mod:`pm_core.mcp.fast_start`)
can check the configuration and answer the handshake before the SDK is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs

from pm_core.contracts import (
    ConfigurationError,
    RequestContext,
    ToolDescriptor,
    profile_tier,
    tier_includes,
)
from pm_core.host import Host
from pm_core.operator import OperatorPolicy
from pm_core.tracker.api import Tracker

MODERN_VERSIONS = ("2026-07-28",)
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18")
#: Tool results bigger than this on the wire become an error asking to narrow the call.
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
INSTRUCTIONS = (
    "pm is this repository's project tracker. Start with pm_context or pm_next, "
    "claim before you work (pm_claim), record evidence (pm_comments, pm_files, "
    "pm_test) and close with a reason (pm_close)."
)
#: ``PM_MCP_SKILLS``: ``negotiated`` serves skills only to clients that declare
#: the extension; ``open`` also serves clients that declare nothing, per the
#: Final Skills text (see docs/skills.md).
SKILLS_MODES = ("negotiated", "open")


def instructions_for(tools: frozenset[str]) -> str:
    """The server instructions, naming only tools in ``tools`` (the profile's)."""

    def some(names: tuple[str, ...]) -> list[str]:
        return [n for n in names if n in tools]

    parts = ["pm is this repository's project tracker."]
    start = some(("pm_context", "pm_next"))
    if start:
        parts.append(f"Start with {' or '.join(start)}.")
    if "pm_claim" in tools:
        parts.append("Claim before you work (pm_claim).")
    evidence = some(("pm_comments", "pm_files", "pm_test"))
    if evidence:
        parts.append(f"Record evidence ({', '.join(evidence)}).")
    elif "pm_update" in tools:
        parts.append("Record evidence in the item (pm_update).")
    if "pm_close" in tools:
        parts.append("Close with a reason (pm_close).")
    return " ".join(parts)


@attrs.define(slots=True)
class ServerConfig:
    """What ``pm-mcp`` was started with."""

    root: Path
    profile: str = "core"
    tool_allowlist: tuple[str, ...] | None = None
    author: str | None = None
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: Read-only mode, deny list and the commands switch (docs/security.md).
    operator: OperatorPolicy = attrs.field(factory=OperatorPolicy)


def skills_mode(env: Mapping[str, str]) -> str:
    """``PM_MCP_SKILLS`` checked against :data:`SKILLS_MODES` (blank: ``negotiated``)."""
    raw = env.get("PM_MCP_SKILLS", "").strip().lower()
    if not raw:
        return "negotiated"
    if raw not in SKILLS_MODES:
        raise ConfigurationError(
            f"PM_MCP_SKILLS must be one of {', '.join(SKILLS_MODES)}, got {raw!r}"
        )
    return raw


def byte_limit(
    env: Mapping[str, str], name: str, default: int, *, unit: str = "number of bytes"
) -> int:
    """A positive count from ``env[name]`` (``default`` when unset or blank)."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigurationError(f"{name} must be a positive {unit}, got {raw!r}")
    return value


def check_startup(host: Host, config: ServerConfig) -> None:
    """Validate the limits, settings and profile (raises ConfigurationError)."""
    byte_limit(config.env, "PM_MCP_MAX_RESPONSE_BYTES", DEFAULT_MAX_RESPONSE_BYTES)
    skills_mode(config.env)
    byte_limit(config.env, "PM_MCP_MAX_REQUEST_BYTES", 1)
    request = RequestContext(profile=config.profile, tool_allowlist=config.tool_allowlist)
    tracker = Tracker(config.root, author=config.author, env=config.env)
    catalog = host.catalog(tracker.schema.contracts(), request=request)
    host.select_tools(catalog, request, "list")
    config.operator.check(host.tools())


def profile_tools(
    host: Host, config: ServerConfig, request: RequestContext | None = None
) -> frozenset[str]:
    """The tool names a client at the server's profile (or ``request``'s) can call.

    Read from the tools' backing commands and tiers (no workspace needed),
    then narrowed by the profile plugins as ``tools/call`` is.
    """
    request = request or RequestContext(
        profile=config.profile, tool_allowlist=config.tool_allowlist
    )
    commands = host.commands()
    light = []
    for name, spec in host.tools().items():
        command = commands.get(spec.command)
        tier = command.tier if command else "full"
        family = command.family if command else spec.family
        light.append(ToolDescriptor(name, "", {}, spec.command, tier, family))
    try:
        chosen = host.select_tools(light, request, "call")
    except Exception:  # a configuration error is reported by check_startup
        top = profile_tier(request.profile)
        chosen = [t for t in light if tier_includes(top, t.tier)]
    return frozenset(t.name for t in chosen)
