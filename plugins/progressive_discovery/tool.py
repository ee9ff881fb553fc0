"""The ``pm_discover`` tool: schema, argument checks, candidates, handler.

Candidates are the request's callable tools plus the extension commands it can
reach through ``pm_run`` (rows named ``pm_run:<command>``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pm_plugins.progressive_discovery.engine import (
    DEFAULT_LIMIT,
    DEFAULT_OUTPUT_BUDGET,
    FILTER_TIERS,
    MAX_LIMIT,
    MAX_QUERY_LENGTH,
    discover_tools,
)
from pm_plugins.progressive_discovery.errors import DiscoveryError

from pm_core.contracts import (
    FAMILIES,
    UNDECLARED_EFFECTS,
    CommandSpec,
    ToolContext,
    ToolDescriptor,
    ToolSpec,
    WorkspaceContracts,
    profile_tier,
    tier_includes,
)

TOOL_NAME = "pm_discover"
COMMAND = "discover"
RUN_TOOL = "pm_run"
#: Prefix of rows that stand for an extension command reached through pm_run.
RUN_PREFIX = "pm_run:"

DESCRIPTION = (
    "Rank pm's tools and extension commands for an intent, within a token budget. "
    "Rows: name, tier, family, score, signals; includeSchema adds input schemas; "
    "page with the returned cursor. A pm_run:<x> row runs through pm_run with action <x>."
)


def input_schema(_contracts: WorkspaceContracts) -> Mapping[str, Any]:
    """The compact input schema (it is listed in every negotiated ``tools/list``)."""
    return {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": MAX_QUERY_LENGTH, "description": "Intent."},
            "family": {"type": "string", "enum": list(FAMILIES)},
            "tier": {"type": "string", "enum": list(FILTER_TIERS)},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
            "cursor": {"type": "string"},
            "includeSchema": {"type": "boolean"},
            "outputBudget": {"type": "integer", "minimum": 1, "description": "Tokens."},
        },
    }


def _run_schema(command: CommandSpec) -> dict[str, Any]:
    """How to call an extension command through ``pm_run``."""
    properties: dict[str, Any] = {"action": {"const": command.name}}
    required = ["action"]
    for param in command.params:
        prop: dict[str, Any] = {"type": param.type}
        if param.repeatable:
            prop = {"type": "array", "items": prop}
        if param.help:
            prop["description"] = param.help
        properties[param.name] = prop
        if param.required:
            required.append(param.name)
    return {"type": "object", "properties": properties, "required": required}


def extension_candidates(
    tools: Sequence[ToolDescriptor], commands: Mapping[str, CommandSpec], profile: str
) -> list[ToolDescriptor]:
    """Extension commands this request reaches through ``pm_run``, as descriptors.

    Only when ``pm_run`` is selected, and only runnable extension commands the
    profile's tier advertises (a custom allowlist that selects ``pm_run``
    reaches every non-internal one), as the profiles plugin decides it.
    """
    if not any(t.name == RUN_TOOL for t in tools):
        return []
    tier = profile_tier(profile)
    out: list[ToolDescriptor] = []
    for name in sorted(commands):
        command = commands[name]
        if command.builtin or command.handler is None or not tier_includes(tier, command.tier):
            continue
        out.append(
            ToolDescriptor(
                name=f"{RUN_PREFIX}{command.name}",
                description=command.summary,
                input_schema=_run_schema(command),
                command=command.name,
                tier=command.tier,
                family=command.family,
                meta={"via": RUN_TOOL, "action": command.name},
                title=command.title or command.name,
                effects=command.effects or UNDECLARED_EFFECTS,
            )
        )
    return out


def _arg(args: Mapping[str, Any], key: str, kind: type, what: str) -> Any:
    """``args[key]`` when present, checked against ``kind``; JSON null means absent."""
    value = args.get(key)
    if value is None:
        return None
    # bool is an int in Python, but JSON true/false is never a number here.
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise DiscoveryError(
            f"{key} must be {what}, got {value!r}", details={"field": key, "value": value}
        )
    return value


def handle(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, Any]:
    """Run ``pm_discover`` for one request and return the wire result."""
    limit = _arg(args, "limit", int, "an integer from 1 to 100")
    budget = _arg(args, "outputBudget", int, "a positive integer (tokens)")
    include = _arg(args, "includeSchema", bool, "true or false")
    tier = _arg(args, "tier", str, "core, standard or full")
    profile = ctx.request.profile
    candidates = [*ctx.tools, *extension_candidates(ctx.tools, ctx.commands, profile)]
    result = discover_tools(
        candidates,
        query=_arg(args, "query", str, "text"),
        family=_arg(args, "family", str, "a capability family name"),
        tier="full" if tier is None else tier,
        limit=DEFAULT_LIMIT if limit is None else limit,
        cursor=_arg(args, "cursor", str, "a next_cursor string"),
        include_schema=bool(include),
        profile=profile,
        output_budget=DEFAULT_OUTPUT_BUDGET if budget is None else budget,
    )
    return result.to_json()


def tool_spec() -> ToolSpec:
    """The ``pm_discover`` tool contract."""
    return ToolSpec(
        name=TOOL_NAME,
        description=DESCRIPTION,
        command=COMMAND,
        input_schema=input_schema,
        handler=handle,
        family="orientation",
    )
