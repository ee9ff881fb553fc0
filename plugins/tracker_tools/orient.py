"""Tools that read the tracker as a whole: rank, plan, analyse and check it.

``pm_context``, ``pm_next``, ``pm_plan`` and ``pm_validate`` (core), and
``pm_focus``, ``pm_graph``, ``pm_health`` and ``pm_events`` (standard). The
analyses live in the SDK; a handler only checks arguments and calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pm_plugins.tracker_tools import args as a
from pm_plugins.tracker_tools import declared as d
from pm_plugins.tracker_tools import schema as s

from pm_core.contracts import ToolContext, WorkspaceContracts
from pm_core.params import tool_keys
from pm_core.tracker.model.errors import UsageError

Schema = dict[str, Any]

_PLAN_SUBCOMMANDS = ("show", "create", "step", "decision")  # pm_core.commands.plan.TOOL_SUBCOMMANDS
_EVENTS_MAX = 1000


# ------------------------------------------------------------------ pm_context / pm_next


def _options_schema(command: str) -> Callable[[WorkspaceContracts], Schema]:
    def schema(c: WorkspaceContracts) -> Schema:
        return s.tool({"options": s.obj(d.properties(command, c, compact=False))})

    schema.__doc__ = f"``{{options: {{...every pm {command} option}}}}``."
    return schema


def _declared_options(command: str, args: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``command``'s declared values from the ``options`` object, and warnings for unknown keys."""
    known = [a.snake(key) for key in tool_keys(d.params(command))]
    options, warnings = a.known_options(a.bag(args), known, f"pm_{command}")
    return d.values(command, options), warnings


context_schema = _options_schema("context")
next_schema = _options_schema("next")


def context_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The ranked working context (every ``pm context`` option)."""
    from pm_core.commands.work import context

    values, warnings = _declared_options("context", args)
    return a.result(context(ctx.tracker, **values), warnings)


def next_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The recommended item with reasons, then ready, blocked and held rows."""
    from pm_core.commands.work import next_items

    values, warnings = _declared_options("next", args)
    if values["claim"] and "claim" in ctx.request.withheld_commands:
        # pm_next reads; its claim option writes, so it follows the claim command's gate.
        raise UsageError(
            "claim is withheld by the operator (read-only mode or PM_MCP_DENY)",
            hint="call pm_next without claim",
        )
    return a.result(next_items(ctx.tracker, **values), warnings)


# ------------------------------------------------------------------ pm_plan


def plan_schema(c: WorkspaceContracts) -> Schema:
    """``{subcommand?, id, stepRef, status, title, steps, text, dependsOn, after}`` (``pm plan``'s)."""
    from pm_core.commands.plan import TOOL_KEY_HELP, TOOL_SUBCOMMANDS

    return s.tool(d.group_properties("plan", c, TOOL_SUBCOMMANDS, TOOL_KEY_HELP))


#: The arguments each plan subcommand reads (the rest are named in a warning).
_PLAN_READS: Mapping[str, tuple[str, ...]] = {
    "show": ("id",),
    "create": ("id", "title", "steps", "text"),
    "step": ("id", "stepRef", "status", "title", "text", "dependsOn", "after"),
    "decision": ("id", "text"),
}


def plan_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Show (default) or create a plan, move or add a step, or record a decision."""
    sub = a.text(args, "subcommand") or "show"
    if sub not in _PLAN_SUBCOMMANDS:
        raise UsageError(
            f"unknown plan subcommand {sub!r}", hint=f"use one of: {', '.join(_PLAN_SUBCOMMANDS)}"
        )
    ignored = [
        f"argument {key!r} is not used by plan {sub}; it was ignored"
        for key in ("stepRef", "status", "title", "steps", "text", "dependsOn", "after")
        if args.get(key) is not None and key not in _PLAN_READS[sub]
    ]
    tracker = ctx.tracker
    if sub == "create":
        value = tracker.plan_create(
            a.required_text(args, "title"),
            a.text_list(args, "steps"),
            parent=a.text(args, "id"),
            description=a.text(args, "text") or "",
        )
        return a.result(value, ignored)
    item = a.required_text(args, "id")
    if sub == "show":
        value = tracker.plan_show(item)
    elif sub == "decision":
        value = tracker.plan_decision(item, a.required_text(args, "text"))
    elif (step := a.text(args, "stepRef")) is None:
        if args.get("status") is not None:
            ignored.append("argument 'status' is not used when adding a step; it was ignored")
        value = tracker.plan_add_step(
            item,
            a.required_text(args, "title"),
            note=a.text(args, "text"),
            depends_on=a.text_list(args, "dependsOn"),
            after=a.text(args, "after"),
        )
    else:
        for key in ("title", "dependsOn", "after"):
            if args.get(key) is not None:
                ignored.append(f"argument {key!r} is not used when moving a step; it was ignored")
        value = tracker.plan_step(
            item, step, a.required_text(args, "status"), note=a.text(args, "text")
        )
    return a.result(value, ignored)


# ------------------------------------------------------------------ pm_validate / pm_health


validate_schema = _options_schema("validate")


def validate_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """The checks' findings (all checks unless some are named); ``fix`` repairs history first, as ``pm validate --fix``."""
    from pm_core.tracker.query.validate import repair_history

    values, warnings = _declared_options("validate", args)
    repaired = repair_history(ctx.tracker) if values["fix"] else None
    report = ctx.tracker.validate(list(values["checks"]) or None)
    if repaired is not None:
        report = {**report, "repair": repaired}
    return a.result(report, warnings)


health_schema, _health_request_schema, _health_accepts = d.builders("health")


def health_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Workspace health checks with remediation."""
    return ctx.tracker.health()


# ------------------------------------------------------------------ pm_focus


def focus_schema(_c: WorkspaceContracts) -> Schema:
    """``{id?, clear?}``."""
    return s.tool({"id": s.item_id(), "clear": s.boolean()})


def focus_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Show, set or clear the session focus."""
    item = a.text(args, "id")
    if a.flag(args, "clear"):
        if item is not None:
            raise UsageError("pass id or clear, not both", hint="clear first, then set")
        return ctx.tracker.clear_focus()
    if item is not None:
        return ctx.tracker.set_focus(item)
    return ctx.tracker.get_focus()


# ------------------------------------------------------------------ pm_graph


graph_schema, _graph_request_schema, _graph_accepts = d.builders("graph", ["subcommand"])


def graph_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """One read-only graph analysis, bounded as ``pm graph`` bounds it."""
    from pm_core.commands.graph import graph

    return graph(ctx.tracker, **d.values("graph", args))


# ------------------------------------------------------------------ pm_events


def events_schema(c: WorkspaceContracts) -> Schema:
    """``{since?, limit?}`` (``pm events``'s), the limit capped at 1000 for one tool result."""
    props = d.properties("events", c, compact=False)
    props["limit"] = {**props["limit"], "maximum": _EVENTS_MAX}
    return s.tool(props)


def events_handler(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Recent history events across the tracker, newest first."""
    values = d.values("events", args)
    limit = values["limit"]
    if limit is not None and limit > _EVENTS_MAX:
        raise UsageError(f"limit must be at most {_EVENTS_MAX}, got {limit}")
    return ctx.tracker.events(since=values["since"], limit=limit or 100)
