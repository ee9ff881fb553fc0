"""Standard-tier tools about the workspace itself: settings, schema, contracts, profiles."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pm_plugins.tracker_tools import args as a
from pm_plugins.tracker_tools import declared as d
from pm_plugins.tracker_tools import schema as s

from pm_core.contracts import PROFILE_TIERS, ToolContext, WorkspaceContracts, tier_includes
from pm_core.tracker.model.errors import UsageError

Schema = dict[str, Any]

_SCHEMA_SUBCOMMANDS = ("list", "add-type", "add-status", "add-field")  # as SCHEMA_SUBCOMMANDS


# ------------------------------------------------------------------ pm_config


def config_schema(c: WorkspaceContracts) -> Schema:
    """``{configAction, key?, value?}``: ``pm config``'s subcommands and their arguments."""
    from pm_core.commands.admin import CONFIG_ACTIONS

    return s.tool(
        d.group_properties("config", c, CONFIG_ACTIONS, selector="configAction"),
        ["configAction"],
    )


def config_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Get, set, unset or list settings, as ``pm config`` does."""
    from pm_core.commands.admin import CONFIG_ACTIONS

    action = a.required_text(args, "configAction")
    if action == "list":
        return ctx.tracker.config_list()
    if action == "get":
        return ctx.tracker.config_get(a.required_text(args, "key"))
    if action == "set":
        if "value" not in args:
            raise UsageError("config set needs a value", hint="pass value")
        return ctx.tracker.config_set(a.required_text(args, "key"), args["value"])
    if action == "unset":
        return ctx.tracker.config_unset(a.required_text(args, "key"))
    raise UsageError(
        f"unknown configAction {action!r}", hint=f"use one of: {', '.join(CONFIG_ACTIONS)}"
    )


# ------------------------------------------------------------------ pm_schema


def schema_schema(c: WorkspaceContracts) -> Schema:
    """``{subcommand, name?, fieldType?, commands?, roles?, description?, ...}`` (``pm schema``'s)."""
    from pm_core.commands.admin import SCHEMA_SUBCOMMANDS

    props = d.group_properties("schema", c, SCHEMA_SUBCOMMANDS)
    # pm schema add field --commands takes one comma-separated value; the tool, the list.
    props["commands"] = {"type": "array", "items": props["commands"]}
    return s.tool(props, ["subcommand"])


#: The options each ``add-*`` subcommand takes: argument -> SDK keyword.
_SCHEMA_OPTIONS: Mapping[str, Mapping[str, str]] = {
    "type": {
        "description": "description",
        "folder": "folder",
        "aliases": "aliases",
        "defaultStatus": "default_status",
    },
    "status": {"roles": "roles"},
    "field": {"fieldType": "field_type", "commands": "commands", "description": "description"},
}


def schema_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """List the schema, or add a type, status or custom field."""
    sub = a.required_text(args, "subcommand")
    if sub == "list":
        return ctx.tracker.schema_list()
    if sub not in _SCHEMA_SUBCOMMANDS:
        raise UsageError(
            f"unknown schema subcommand {sub!r}",
            hint=f"use one of: {', '.join(_SCHEMA_SUBCOMMANDS)}",
        )
    kind = sub.removeprefix("add-")
    takes = _SCHEMA_OPTIONS[kind]
    options: dict[str, Any] = {}
    lists = ("commands", "roles", "aliases")
    for arg in (
        "fieldType",
        "commands",
        "roles",
        "description",
        "folder",
        "aliases",
        "defaultStatus",
    ):
        if args.get(arg) is None:
            continue
        if arg not in takes:
            raise UsageError(f"{arg} does not apply to {sub}", hint=f"drop {arg}")
        # Only given options are passed on, so the SDK's defaults apply to the rest.
        options[takes[arg]] = a.text_list(args, arg) if arg in lists else a.text(args, arg)
    return ctx.tracker.schema_add(kind, a.required_text(args, "name"), **options)


# ------------------------------------------------------------------ pm_contracts


def contracts_schema(c: WorkspaceContracts) -> Schema:
    """``{}`` (``pm contracts`` declares no parameters)."""
    return s.tool(d.properties("contracts", c, compact=False))


def contracts_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The machine-readable command and schema contract."""
    return ctx.tracker.contracts(commands=list(ctx.commands.values()) or None)


# ------------------------------------------------------------------ pm_profile


def profile_schema(_c: WorkspaceContracts) -> Schema:
    """``{}``."""
    return s.tool({})


def profile_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The active profile, the tools it selected, and what each profile would list.

    Tiers come from the tools this request sees and from this plugin's own
    tools (a tool another plugin contributes is known only when selected).
    """
    from pm_plugins.tracker_tools.registry import tool_specs
    from pm_plugins.tracker_tools.run import RUN_TOOL, extension_actions

    tiers: dict[str, str] = {}
    for spec in tool_specs():
        command = ctx.commands.get(spec.command)
        tiers[spec.name] = command.tier if command else "full"
    for tool in ctx.tools:
        tiers[tool.name] = tool.tier
    profiles: dict[str, Any] = {}
    for name, tier in PROFILE_TIERS.items():
        if name == "custom":
            continue
        names = {t for t, at in tiers.items() if tier_includes(tier, at)}
        if RUN_TOOL in tiers and extension_actions(ctx.commands, tier):
            names.add(RUN_TOOL)
        profiles[name] = {"tier": tier, "tools": sorted(names), "count": len(names)}
    profiles["custom"] = {
        "tools": sorted(ctx.request.tool_allowlist or ()),
        "how": "PM_MCP_PROFILE=custom with PM_MCP_TOOLS=<comma-separated tool names>",
    }
    return {
        "active": ctx.request.profile,
        "selected": sorted(t.name for t in ctx.tools),
        "profiles": profiles,
    }
