"""``pm_run``: run any command the request's profile can see, by name.

Built-in actions reuse the matching tool's handler or call the SDK; extension
actions call the command's handler. ``internal`` commands are never reachable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from pm_plugins.tracker_tools import args as a
from pm_plugins.tracker_tools import schema as s

from pm_core.capabilities import builtin_commands
from pm_core.contracts import (
    CommandSpec,
    ParamSpec,
    RequestContext,
    ToolContext,
    ToolResult,
    WorkspaceContracts,
    profile_tier,
    tier_includes,
)
from pm_core.hosting import call_command
from pm_core.params import (
    Arg,
    ToolArgumentError,
    action,
    declared,
    declared_subcommands,
    from_tool,
    tool_keys,
)
from pm_core.tracker.model.errors import UsageError

Schema = dict[str, Any]
RUN_TOOL = "pm_run"
RUN_COMMAND = "run"

#: pm_run's own arguments; everything else is passed on to the action.
_OWN = ("action", "args", "_meta", *s.COMMON_ARGUMENTS)
_PARAM_TYPES: Mapping[str, Schema] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
}


# ------------------------------------------------------------------ built-ins without a tool


@cache
def declared_actions() -> dict[str, tuple[str, ...]]:
    """Built-in commands ``pm_run`` runs from their declaration: name -> subcommands.

    A command (or each subcommand of a group) whose module names the function
    both doors call (:func:`pm_core.params.action`); a plain command has no
    subcommands. ``merge driver`` has none: git alone runs it.
    """
    out: dict[str, tuple[str, ...]] = {}
    for command in builtin_commands():
        subs = tuple(
            sub for sub in declared_subcommands(command.name) if action(f"{command.name} {sub}")
        )
        if subs:
            out[command.name] = subs
        elif action(command.name) is not None:
            out[command.name] = ()
    return out


def _run_declared(
    ctx: ToolContext, command: CommandSpec, passed: dict[str, Any], positionals: list[Any]
) -> Any:
    """Run a built-in with no tool: its declared parameters, read as its tool keys.

    Arguments come by name (top level or ``options``) or by position: a group's
    ``subcommand`` first, then the declared positionals in order. A key the
    command does not declare is refused for a write and ignored, with a
    warning, for a read, so a write never runs without an argument it was given.
    """
    name = command.name
    given = {**a.bag(passed), **{k: v for k, v in passed.items() if k != "options"}}
    rest = list(positionals)
    subs = declared_actions()[name]
    target = name
    if subs:
        if given.get("subcommand") is None and rest:
            given["subcommand"] = rest.pop(0)
        sub = given.pop("subcommand", None)
        if sub not in subs:
            raise UsageError(
                f"{name} needs a subcommand"
                if sub is None
                else f"{name} has no subcommand {sub!r}",
                hint=f"pass subcommand: one of {', '.join(subs)}",
            )
        target = f"{name} {sub}"
        params = declared_subcommands(name)[str(sub)]
    else:
        params = declared(name)
    keys = tool_keys(params)
    _fill(given, [p.tool for p in params if isinstance(p, Arg) and p.tool is not None], rest, name)
    unknown = sorted(k for k in given if k not in keys)
    takes = ", ".join(sorted(keys)) or "no arguments"
    if unknown and not (command.effects is not None and command.effects.read_only):
        raise UsageError(
            f"{target} does not take {', '.join(repr(k) for k in unknown)}",
            hint=f"{target} takes: {takes} (pm_contracts lists each)",
        )
    warnings = [
        f"argument {key!r} is not used by {target}; it was ignored (it reads: {takes})"
        for key in unknown
    ]
    try:
        values = from_tool(params, given)
    except ToolArgumentError as exc:
        raise UsageError(f"{target}: {exc}", hint="pm_contracts lists each parameter") from None
    function = action(target)
    assert function is not None  # declared_actions() lists only commands that have one
    return _merge(function(ctx.tracker, **values), warnings)


def _tool_commands() -> dict[str, Any]:
    """Command name -> this plugin's ToolSpec backed by it (pm_run excluded)."""
    from pm_plugins.tracker_tools.registry import tool_specs

    return {spec.command: spec for spec in tool_specs() if spec.command != RUN_COMMAND}


def extension_actions(commands: Mapping[str, CommandSpec], tier: str) -> list[str]:
    """Extension commands (with a handler) advertised at ``tier``."""
    return sorted(
        c.name
        for c in commands.values()
        if not c.builtin and c.handler is not None and tier_includes(tier, c.tier)
    )


def pm_run_actions(commands: Mapping[str, CommandSpec], profile_tier: str) -> list[str]:
    """Every action ``pm_run`` offers at ``profile_tier``: built-ins, then extensions.

    A built-in is offered when this plugin can run it (through its tool or
    the SDK) and its tier is visible; ``run`` itself never is.
    """
    runnable = set(_tool_commands()) | set(declared_actions())
    builtins = sorted(
        c.name
        for c in commands.values()
        if c.builtin and c.name in runnable and tier_includes(profile_tier, c.tier)
    )
    return builtins + extension_actions(commands, profile_tier)


# ------------------------------------------------------------------ schema


def _base(actions: Sequence[str]) -> dict[str, Schema]:
    return {
        "action": s.choice(actions),
        "id": s.item_id(),
        "query": s.string(),
        "reason": s.string(),
        "force": s.boolean(),
        "subcommand": s.string(),
        "options": {"type": "object", "additionalProperties": True},
        "args": s.string_list("Positional arguments, in order."),
    }


def _param_schema(param: ParamSpec) -> Schema:
    prop = dict(_PARAM_TYPES.get(param.type, {"type": "string"}))
    return {"type": "array", "items": prop} if param.repeatable else prop


def input_schema(_c: WorkspaceContracts) -> Schema:
    """The static schema: every built-in action at the widest tier."""
    actions = pm_run_actions({c.name: c for c in builtin_commands()}, "full")
    return s.tool(_base(actions), ["action"])


def request_schema(
    _c: WorkspaceContracts, commands: Mapping[str, CommandSpec], request: RequestContext
) -> Schema:
    """The schema for one request: its tier's actions and the extensions' parameters."""
    tier = profile_tier(request.profile)
    props = _base(pm_run_actions(commands, tier))
    for name in extension_actions(commands, tier):
        for param in commands[name].params:
            props.setdefault(param.name, _param_schema(param))
    return s.tool(props, ["action"])


# ------------------------------------------------------------------ handler


def _positionals(args: Mapping[str, Any]) -> list[Any]:
    raw = args.get("args")
    if raw is None:
        return []
    if isinstance(raw, str | int | float) and not isinstance(raw, bool):
        return [raw]
    if isinstance(raw, list):
        return list(raw)
    raise UsageError(f"args must be a list of positional values, got {raw!r}")


def _fill(params: dict[str, Any], names: Sequence[str], values: list[Any], action: str) -> None:
    """Give positionals to the named parameters not passed by name, in order."""
    free = [n for n in names if n not in params]
    if len(values) > len(free):
        raise UsageError(
            f"too many positional args for {action}: {len(values)} given",
            hint=f"{action} takes {', '.join(free) or 'no more'} positionally",
        )
    params.update(zip(free, values, strict=False))


def handle(ctx: ToolContext, args: Mapping[str, Any]) -> Any:
    """Dispatch ``action`` to a built-in tool, an SDK call, or an extension command."""
    action = a.required_text(args, "action")
    visible = pm_run_actions(ctx.commands, profile_tier(ctx.request.profile))
    if action in ctx.request.withheld_commands:
        raise UsageError(
            f"action {action!r} is withheld by the operator (read-only mode or PM_MCP_DENY)",
            hint=f"valid actions: {', '.join(visible)}",
        )
    if action not in visible:
        raise UsageError(
            f"unknown or unavailable action {action!r} for the {ctx.request.profile} profile",
            hint=f"valid actions: {', '.join(visible)}",
        )
    positionals = _positionals(args)
    passed = {k: v for k, v in args.items() if k not in _OWN}
    command = ctx.commands[action]
    if not command.builtin:
        return run_extension(ctx, command, passed, positionals)
    if action in declared_actions() and action not in _tool_commands():
        return _run_declared(ctx, command, passed, positionals)
    return _run_tool(ctx, action, passed, positionals)


def _run_tool(ctx: ToolContext, action: str, passed: dict[str, Any], positionals: list[Any]) -> Any:
    """Run the tool backing a built-in ``action``; warn about arguments it ignores."""
    spec = _tool_commands()[action]
    schema = spec.input_schema(ctx.tracker.schema.contracts())
    props: Mapping[str, Any] = schema.get("properties", {})
    names = [n for n in schema.get("required", ()) if props.get(n, {}).get("type") == "string"]
    _fill(passed, names, positionals, action)
    warnings = [
        f"argument {key!r} is not declared by {spec.name} (action {action}); "
        "its value may be ignored"
        for key in passed
        if key not in props
    ]
    return _merge(spec.handler(ctx, passed), warnings)


def _coerce(param: ParamSpec, value: Any, action: str) -> Any:
    """Check a value against the parameter's declared type."""
    if param.repeatable:
        values = value if isinstance(value, list) else [value]
        return [_coerce_one(param, v, action) for v in values]
    return _coerce_one(param, value, action)


def _coerce_one(param: ParamSpec, value: Any, action: str) -> Any:
    probe = {param.name: value}
    try:
        if param.type == "integer":
            return a.integer(probe, param.name)
        if param.type == "boolean":
            return a.flag(probe, param.name)
        if param.type == "number":
            if isinstance(value, int | float) and not isinstance(value, bool):
                return value
            raise UsageError(f"{param.name} must be a number, got {value!r}")
        return a.text(probe, param.name)
    except UsageError as exc:
        exc.message = f"{action}: {exc.message}"
        raise


def run_extension(
    ctx: ToolContext,
    command: CommandSpec,
    passed: Mapping[str, Any],
    positionals: list[Any],
) -> Any:
    """Call an extension command's handler with its declared parameters.

    Parameters come by name (top level or ``options``) or by position, in
    declaration order. Undeclared names are dropped with a warning; missing
    required ones are a usage error naming them.
    """
    declared = {p.name: p for p in command.params}
    given = {**a.bag(passed), **{k: v for k, v in passed.items() if k != "options"}}
    warnings = [
        f"argument {key!r} is not a parameter of {command.name}; it was ignored"
        for key in given
        if key not in declared
    ]
    params = {k: v for k, v in given.items() if k in declared and v is not None}
    free = [p for p in command.params if p.name not in params]
    if free and free[-1].repeatable and len(positionals) > len(free):
        tail = len(free) - 1
        positionals = [*positionals[:tail], positionals[tail:]]
    _fill(params, [p.name for p in free], positionals, command.name)
    missing = [p.name for p in command.params if p.required and p.name not in params]
    if missing:
        raise UsageError(
            f"{command.name} needs {', '.join(missing)}",
            hint="pass them by name or in args, in order",
        )
    call = {name: _coerce(declared[name], value, command.name) for name, value in params.items()}
    for param in command.params:
        if param.name not in call and param.default is not None:
            call[param.name] = param.default
    # The one call path shared with the CLI and the SDK: a handler's unexpected
    # exception becomes a PmError, so the client gets an error result, not -32603.
    return _merge(call_command(command, ctx, call), warnings)


def _merge(outcome: Any, warnings: list[str]) -> Any:
    """Add ``warnings`` to a handler's result (plain value or ToolResult)."""
    if isinstance(outcome, ToolResult):
        return a.result(outcome.result, [*warnings, *outcome.warnings])
    return a.result(outcome, warnings)
