"""MCP tool profiles: which tools a ``pm-mcp`` server lists and lets clients call.

``PM_MCP_PROFILE`` picks ``core`` (default), ``standard``, ``full`` (by command
tier) or ``custom`` (exactly ``PM_MCP_TOOLS``). A configuration that cannot
work raises :class:`ConfigurationError`. Hook: ``pm_select_tools`` (``trylast``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pm_core import hookimpl
from pm_core.contracts import (
    PROFILE_TIERS,
    CommandSpec,
    ConfigurationError,
    RequestContext,
    ToolDescriptor,
    tier_includes,
)

__all__ = ["PROFILES", "RUN_TOOL", "pm_select_tools", "select"]

#: The profile names, in widening order.
PROFILES: tuple[str, ...] = tuple(PROFILE_TIERS)
#: The tool that runs extension commands.
RUN_TOOL = "pm_run"


def _extension_visible(commands: Mapping[str, CommandSpec], tier: str) -> bool:
    """Whether some extension command is advertised at ``tier``."""
    return any(
        not c.builtin and c.handler is not None and tier_includes(tier, c.tier)
        for c in commands.values()
    )


def _custom(catalog: Sequence[ToolDescriptor], allowlist: Sequence[str] | None) -> list[str]:
    """The allowlist, checked against the catalog."""
    names = [n.strip() for n in allowlist or () if n.strip()]
    if not names:
        raise ConfigurationError(
            "the custom profile needs PM_MCP_TOOLS: a comma-separated list of tool names "
            "(for example PM_MCP_TOOLS=pm_get,pm_search)"
        )
    known = {t.name for t in catalog}
    unknown = [n for n in dict.fromkeys(names) if n not in known]
    if unknown:
        raise ConfigurationError(
            f"PM_MCP_TOOLS names tools that do not exist: {', '.join(unknown)}; "
            f"known tools: {', '.join(sorted(known))}"
        )
    return names


def select(
    catalog: Sequence[ToolDescriptor],
    request: RequestContext,
    commands: Mapping[str, CommandSpec],
) -> list[ToolDescriptor]:
    """The tools the request's profile selects, in catalog order."""
    profile = request.profile
    if profile not in PROFILE_TIERS:
        raise ConfigurationError(
            f"unknown MCP tool profile {profile!r}; set PM_MCP_PROFILE to one of: "
            f"{', '.join(PROFILES)}"
        )
    if profile == "custom":
        wanted = set(_custom(catalog, request.tool_allowlist))
        return [t for t in catalog if t.name in wanted]
    tier = PROFILE_TIERS[profile]
    with_run = _extension_visible(commands, tier)
    return [t for t in catalog if tier_includes(tier, t.tier) or (with_run and t.name == RUN_TOOL)]


@hookimpl(trylast=True)
def pm_select_tools(
    catalog: Sequence[ToolDescriptor],
    request: RequestContext,
    commands: Mapping[str, CommandSpec],
) -> Sequence[ToolDescriptor]:
    """Select the profile's tools; listing and calling see the same set (any ``purpose``)."""
    return select(catalog, request, commands)
